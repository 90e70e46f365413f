"""``list_team``: the roster by person, with each person's live agent sessions.

Sessions come from two places: this machine's own event log (the freshest view of your sessions), and the
presence snapshots teammates' daemons publish to ``refs/hive/presence/<machine>`` (as of the last sync; only
snapshots signed by an active member count, :func:`gitive.daemon.presence.peers`). Every string is defanged: a
teammate's fields side by side must not open a frame that none of them opens alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gitive.mcp import shape
from gitive.mcp.memory import opened
from gitive.mcp.sessions import Seen, summarize

LIVE_MS = 30 * 60_000  # a session with an event in the last 30 minutes counts as live
SESSIONS_PER_PERSON = 5
PRESENCE_NOTE = ("Your sessions come from this machine's event log; teammates' from the presence their "
                 "daemons publish, as of the last `gitive sync`.")


def list_team_tool(repo: Path | str | None, filter: str = "", include_inactive: bool = False, limit: int = 20,
                   offset: int = 0) -> dict[str, Any]:
    """The MCP ``list_team`` (its filter argument is named ``filter``)."""
    return list_team(repo, filter, include_inactive=include_inactive, limit=limit, offset=offset)


def list_team(repo: Path | str | None, name_filter: str = "", *, include_inactive: bool = False,
              limit: int = 20, offset: int = 0, now_ms: int | None = None) -> dict[str, Any]:
    """Persons of the roster (filtered by a substring of person or machine name), their machines, which is
    you, and their live sessions; one bounded page."""
    from gitive.core.clock import now_ms as clock
    from gitive.index import queries
    from gitive.store.repo import workdir

    now = now_ms if now_ms is not None else clock()
    size, offset, needle = shape.page_size(limit), max(0, int(offset)), name_filter.strip().lower()
    with opened(repo) as (hive, conn, _):
        members = queries.members(conn)
        me = _my_machine(hive)
        live = _peer_sessions(hive, members, now)
        root = workdir(hive.project)
    mine = next((m["person"] for m in members if m["machine"] == me), None)
    if mine:  # this machine's sessions first: its own event log is fresher than any snapshot
        local = [session_view(s, now) for s in summarize(root, now - LIVE_MS) if not s.ended]
        live[mine] = local + live.get(mine, [])
    people: dict[str, list[dict[str, Any]]] = {}
    for m in members:
        named = not needle or needle in m["person"] or needle in m["name"].lower()
        if named and (m["active"] or include_inactive):
            people.setdefault(m["person"], []).append(m)
    rows = [_person(person, machines, me, live.get(person, []))
            for person, machines in sorted(people.items())]
    return {"people": rows[offset:offset + size], "offset": offset,
            "next_offset": offset + size if len(rows) > offset + size else None, "total": len(rows),
            "note": PRESENCE_NOTE}


def _my_machine(hive: Any) -> str | None:
    from gitive.errors import KeyFileError

    try:
        return str(hive.me)
    except KeyFileError:
        return None


def _peer_sessions(hive: Any, members: list[dict[str, Any]], now: int) -> dict[str, list[dict[str, Any]]]:
    """Live sessions in teammates' verified presence snapshots, by person, most recently seen first."""
    from gitive.daemon import presence

    found: dict[str, list[dict[str, Any]]] = {}
    for snap in presence.peers(hive, {m["machine"]: m for m in members}):
        for item in snap.get("sessions") or []:
            if isinstance(item, dict) and now - _int(item.get("last_seen")) < LIVE_MS:
                found.setdefault(snap["person"], []).append(peer_view(item, snap, now))
    for views in found.values():
        views.sort(key=lambda v: v["last_seen_minutes_ago"])
    return found


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def _person(person: str, machines: list[dict[str, Any]], me: str | None,
            sessions: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "person": shape.cut(person, shape.MAX_NAME),
        "you": any(m["machine"] == me for m in machines),
        "active": any(m["active"] for m in machines),
        "machines": [{"name": shape.cut(m["name"], shape.MAX_NAME), "machine": m["machine"][:12],
                      "role": shape.cut(m["role"], shape.MAX_NAME), "active": m["active"]}
                     for m in machines[: shape.MAX_LIST]],
        "sessions": sessions[:SESSIONS_PER_PERSON],
    }


def session_view(seen: Seen, now: int, files: dict[str, int] | None = None) -> dict[str, Any]:
    """One of this machine's sessions: id, harness, minutes since last seen, this repository or not, files."""
    touched = files if files is not None else seen.files
    top = sorted(touched.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    return {"session": shape.cut(seen.session, shape.MAX_NAME),
            "harness": shape.cut(seen.harness, shape.MAX_NAME),
            "machine": "this machine", "last_seen_minutes_ago": max(0, (now - seen.last_ms) // 60_000),
            "in_this_repo": seen.in_repo, "files": [shape.cut(path, shape.MAX_NAME) for path, _ in top]}


def peer_view(item: dict[str, Any], snap: dict[str, Any], now: int) -> dict[str, Any]:
    """A teammate's session from their presence snapshot: metadata only, bounded and defanged."""
    files = item.get("modified") or item.get("files") or []
    label = str(item.get("repo_label") or "")
    shown = [_in_repo(f, label) for f in files[-5:] if isinstance(f, str)] if isinstance(files, list) else []
    return {
        "session": shape.cut(str(item.get("address") or item.get("name") or ""), shape.MAX_NAME),
        "harness": shape.cut(str(item.get("harness") or ""), shape.MAX_NAME),
        "machine": shape.cut(str(snap.get("machine_name") or ""), shape.MAX_NAME),
        "last_seen_minutes_ago": max(0, (now - _int(item.get("last_seen"))) // 60_000),
        "repo": shape.cut(str(item.get("repo_label") or ""), shape.MAX_NAME) or None,
        "branch": shape.cut(str(item.get("branch") or ""), shape.MAX_NAME) or None,
        "turn": shape.cut(str(item.get("turn") or ""), shape.MAX_NAME) or None,
        "doing": shape.cut(str(item.get("doing") or ""), 200) or None,
        "files": shape.names(shown, 5),
    }


def _in_repo(path: str, repo_label: str) -> str:
    """A path a harness reported on a teammate's machine, from its repository root when that shows
    (``/home/bob/api/src/x.py`` in ``api`` is ``src/x.py``)."""
    path = path.replace("\\", "/")
    marker = f"/{repo_label}/" if repo_label else ""
    return path.rsplit(marker, 1)[1] if marker and marker in path else path
