"""Team: people, machines, roles and last seen; live sessions from published presence; overlaps highlighted.

Presence is read from the signed snapshots as published (this machine's own ref and teammates' fetched refs)
through :mod:`gitive.team.presence`, the same verified directory `gitive who` reads, so the page never computes
or publishes presence and never loads the daemon.
"""

from __future__ import annotations

import sqlite3
from itertools import combinations
from typing import Any

from gitive.index import activity, queries
from gitive.team import presence
from gitive.team.hive import Hive
from gitive.ui import charts
from gitive.ui.html import ago, badge, empty, h, short, stat, table

TIMELINE_MS = 8 * 3_600_000


def team_name(conn: sqlite3.Connection, founder: str) -> str:
    teams = queries.verified_entries(conn, log="roster", kind="team", author=founder, limit=1)
    return teams[0]["record"]["name"] if teams else "team"


def _sessions(hive: Hive, members: dict[str, dict[str, Any]], now: int) -> list[dict[str, Any]]:
    rows = []
    for snap in presence.peers(hive, members, include_self=True):
        for s in snap.get("sessions") or []:
            if isinstance(s, dict) and isinstance(s.get("address"), str):
                rows.append(s | {"person": snap["person"], "machine": snap["machine"],
                                 "machine_name": snap.get("machine_name"), "overlaps": [],
                                 "live": now - int(s.get("last_seen") or 0) < presence.LIVE_MS})
    return sorted(rows, key=lambda r: (not r["live"], r["person"], r["address"]))


def overlaps(sessions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Files that two live sessions of one project both modify (what the daemon warns each of them about)."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    live = [s for s in sessions if s["live"] and s.get("project")]
    for a, b in combinations(live, 2):
        if a["project"] != b["project"]:
            continue
        for path in sorted(set(a.get("modified") or []) & set(b.get("modified") or [])):
            item = found.setdefault((a["project"], path), {"file": path, "project": a["project"],
                                                           "repo_label": a.get("repo_label"), "sessions": []})
            for s in (a, b):
                if s["address"] not in item["sessions"]:
                    item["sessions"].append(s["address"])
                if path not in s["overlaps"]:
                    s["overlaps"].append(path)
    return list(found.values())


def _people(members: list[dict[str, Any]], last: dict[str, int], sessions: list[dict[str, Any]]
            ) -> list[dict[str, Any]]:
    seen: dict[str, int] = {}
    for s in sessions:
        seen[s["machine"]] = max(seen.get(s["machine"], 0), int(s.get("last_seen") or 0))
    people: dict[str, dict[str, Any]] = {}
    for m in members:
        p = people.setdefault(m["person"], {"person": m["person"], "roles": [], "machines": [], "last_seen": 0,
                                            "live_sessions": 0})
        machine_seen = max(last.get(m["machine"], 0), seen.get(m["machine"], 0)) or None
        p["machines"].append({"machine": m["machine"], "name": m["name"], "role": m["role"], "active": m["active"],
                              "last_seen": machine_seen})
        if m["active"] and m["role"] not in p["roles"]:
            p["roles"].append(m["role"])
        p["last_seen"] = max(p["last_seen"], machine_seen or 0)
    for s in sessions:
        if s["live"] and s["person"] in people:
            people[s["person"]]["live_sessions"] += 1
    return sorted(people.values(), key=lambda p: (-p["live_sessions"], -p["last_seen"], p["person"]))


def collect(hive: Hive, conn: sqlite3.Connection, now: int) -> dict[str, Any]:
    members = queries.members(conn)
    sessions = _sessions(hive, {m["machine"]: m for m in members}, now)
    found = overlaps(sessions)
    return {"view": "team", "team": {"id": hive.team_id, "name": team_name(conn, hive.founder)}, "me": hive.me,
            "people": _people(members, activity.last_entry(conn), sessions), "sessions": sessions,
            "overlaps": found, "now": now}


def _session_row(s: dict[str, Any], now: int) -> list[str]:
    modified = set(s.get("modified") or [])
    files = []
    for path in (s.get("files") or [])[-6:]:
        cls = "overlap" if path in s["overlaps"] else "modified" if path in modified else ""
        files.append(f'<li class="{cls}">{h(path)}</li>')
    where = f"{h(s.get('repo_label') or '?')}<span class=\"muted\">@</span>{h(s.get('branch') or '?')}"
    turn = badge(str(s.get("turn") or "idle")) if s["live"] else badge("gone quiet", "stale")
    return [f"<strong>{h(s['address'])}</strong><br><span class=\"muted\">{h(s.get('machine_name'))} · "
            f"{h(s.get('harness'))}</span>", where, turn, h(s.get("doing") or ""),
            f'<ul class="files">{"".join(files)}</ul>', ago(s.get("last_seen"), now)]


def render(data: dict[str, Any]) -> str:
    now, people, sessions = data["now"], data["people"], data["sessions"]
    live = [s for s in sessions if s["live"]]
    machines = sum(len(p["machines"]) for p in people)
    out = [f"<h1>Team <span class=\"muted\">{h(data['team']['name'])}</span></h1>", '<div class="stats">',
           stat("people", len(people)), stat("machines", machines), stat("live sessions", len(live), "live"),
           stat("overlaps", len(data["overlaps"]), "warn" if data["overlaps"] else ""), "</div>"]
    if data["overlaps"]:
        items = "".join(f"<li><strong>{h(o['file'])}</strong> in {h(o['repo_label'] or short(o['project']))}: "
                        f"{h(', '.join(o['sessions']))}</li>" for o in data["overlaps"])
        out.append(f'<section class="callout warn" id="overlaps"><h2>Overlaps</h2><p>Two live sessions are '
                   f"changing the same file. Each was told; they should coordinate.</p><ul>{items}</ul></section>")
    out.append('<section id="sessions"><h2>Live sessions</h2>')
    if live:
        out.append(table("Sessions active in the last 30 minutes", ("session", "where", "turn", "doing",
                                                                     "files (latest)", "last seen"),
                         [_session_row(s, now) for s in live], cls="rows sessions",
                         row_attrs=[f'tabindex="0" data-address="{h(s["address"])}"'
                                    + (' class="overlapping"' if s["overlaps"] else "") for s in live]))
    else:
        out.append(empty("No live sessions", [
            "Sessions appear here once an agent harness with gitive's hooks runs in a team repository and the "
            "daemon publishes presence (teammates' after their daemon syncs)."],
            ["gitive install --harness claude", "gitive daemon start"]))
    out.append("</section>")
    spans = [charts.Span(s["address"], int(s.get("started") or s.get("last_seen") or now),
                         int(s.get("last_seen") or now), str(s.get("turn") if s["live"] else "stale"))
             for s in sessions if s.get("last_seen")]
    out.append(charts.timeline("presence-timeline", "Presence, last 8 hours", spans, now - TIMELINE_MS, now))
    rows = []
    for p in people:
        names = ", ".join(f"{h(m['name'])}" + ("" if m["active"] else " <span class=\"muted\">(removed)</span>")
                          + f" <span class=\"muted\">{h(m['role'])} · {h(short(m['machine'], 8))}</span>"
                          for m in p["machines"])
        rows.append([f"<strong>{h(p['person'])}</strong>", h(", ".join(p["roles"]) or "removed"), names,
                     h(p["live_sessions"]), ago(p["last_seen"] or None, now)])
    out.append('<section id="people"><h2>People and machines</h2>')
    out.append(table("Roster", ("person", "role", "machines", "live", "last seen"), rows, cls="rows people",
                     row_attrs=[f'tabindex="0" data-person="{h(p["person"])}"' for p in people]))
    if len(people) == 1:
        out.append(empty("Only you so far", ["Invite a teammate; they join from their clone."],
                         ["gitive invite", "gitive join CODE --person NAME"]))
    out.append("</section>")
    return "".join(out)
