"""Obligations: late, fired, lapsing and open, each with its condition and its three-valued state and reason.

Read through the same library function as `gitive owed --all` (:func:`gitive.anchor.obligations.records.owed`): the
derived state (open, fired, past-due, lapsed), the evaluation (satisfied, unsatisfied, or unverifiable and
why) and the anchors' signed firings. The page computes nothing of its own beyond sorting them into sections.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from gitive.anchor.obligations import records as owing
from gitive.index import obligations as table
from gitive.team.hive import Hive
from gitive.ui.html import ago, badge, empty, h, iso, short, stat
from gitive.ui.html import table as html_table
from gitive.ui.views import pending

DAY_MS = 86_400_000
CLOSED_SHOWN_MS = 7 * DAY_MS  # done, cancelled and lapsed ones stay on the page this long
OWE = ("gitive owe --owner bob --when 'e.event.action == \"vcs.merged\" && e.vcs.branch == \"auth-rotation\"' "
       "--do 'remove the grace period' --deadline 2026-12-20")
ANCHOR = "gitive invite --anchor"
# section, heading, what it means
SECTIONS = (("late", "Late", "past their deadline and still open"),
            ("fired", "Fired", "the condition held: the owner has it as an item"),
            ("lapsing", "Lapsing", "expire within a day unless renewed (`gitive obligation renew ID`)"),
            ("open", "Open", "waiting for their condition"),
            ("closed", "Recently closed", "done, cancelled or lapsed in the last 7 days"))
TRUTH = {"satisfied": "true", "unsatisfied": "false", "unverifiable": "unknown"}


def section_of(item: dict[str, Any], now: int) -> str:
    status = item["status"]
    if status == "past-due":
        return "late"
    if status in ("done", "cancelled", "lapsed"):
        return "closed"
    if "condition" in item["firings"]:
        return "fired"
    return "lapsing" if item["expires"] - now <= DAY_MS else "open"


def collect(hive: Hive, conn: sqlite3.Connection, now: int) -> dict[str, Any]:
    found = owing.owed(conn, include_closed=True, now=now)
    refused = owing.refused(conn)
    anchors = owing.anchors(conn)
    if not found and not refused:
        enable = [OWE] + ([] if anchors else [ANCHOR])
        why = "nobody owes anything yet" + ("" if anchors else ", and the team has no anchor to evaluate conditions")
        return pending.not_enabled("obligations", why, enable, now) | {"anchors": anchors}
    groups: dict[str, list[dict[str, Any]]] = {key: [] for key, _, _ in SECTIONS}
    for item in found:
        item["section"] = section_of(item, now)
        item["truth"] = TRUTH[item["evaluation"]["value"]]
        if item["section"] != "closed" or now - (item["state_at"] or item["expires"]) <= CLOSED_SHOWN_MS:
            groups[item["section"]].append(item)
    for key, items in groups.items():  # most pressing first: by deadline, then by expiry
        items.sort(key=lambda i: (i["deadline"] or i["expires"], i["expires"]), reverse=key == "closed")
    return {"view": "obligations", "enabled": True, "anchors": anchors, "groups": groups,
            "counts": {key: len(items) for key, items in groups.items()}
            | {"unknown": sum(1 for i in found if i["section"] != "closed" and i["truth"] == "unknown")},
            "refused": refused, "current": table.current_fingerprint(conn) == table.fingerprint(conn), "now": now}


def _when(ms: int | None, now: int) -> str:
    """A deadline or expiry: the exact UTC time, and how far off it is."""
    if not ms:
        return '<span class="muted">–</span>'
    s = (ms - now) // 1000
    far = (f"in {s // 86_400} d" if s >= 86_400 else f"in {s // 3600} h" if s >= 3600 else f"in {max(s, 0) // 60} min"
           if s >= 0 else f"{-s // 86_400} d ago" if -s >= 86_400 else f"{-s // 3600} h ago" if -s >= 3600
           else f"{-s // 60} min ago")
    return f'<time datetime="{iso(ms)}" title="{iso(ms)}">{iso(ms)[:16].replace("T", " ")}</time> ' \
           f'<span class="muted">({far})</span>'


def _source(source: dict[str, Any]) -> str:
    kind = source.get("kind", "?")
    label = {"cli": "a person at a terminal", "owe": "an agent (MCP owe)", "review": "a review",
             "message": "a message", "promise": "a promise the owner accepted"}.get(kind, kind)
    ref = f' <code>{h(short(str(source["ref"]), 24))}</code>' if source.get("ref") else ""
    return h(label) + ref


def _row(item: dict[str, Any], now: int) -> list[str]:
    ev = item["evaluation"]
    to = f' → {h(item["to"])}' if item["to"] else ""
    files = "".join(f"<li>{h(f)}</li>" for f in item["files"][:6])
    fired = []
    for reason, f in sorted(item["firings"].items()):
        late = ", late" if f["late"] else ""
        fired.append(f'{h(reason)} fired {ago(f["at"], now)}{h(late)} (item <code>{h(short(f["item"]))}</code>)')
    status = badge(item["status"], {"past-due": "bad", "fired": "ok", "lapsed": "stale"}.get(item["status"], ""))
    return [f'<code>{h(short(item["id"]))}</code><br>{status}',
            f'<strong>{h(item["owner"])}</strong>{to}<p>{h(item["action"])}</p>'
            + (f'<ul class="files">{files}</ul>' if files else ""),
            f'<code class="condition">{h(item["condition"])}</code>',
            f'{badge(item["truth"], "truth-" + item["truth"])} <span class="reason">{h(ev["reason"])}</span>'
            + "".join(f'<p class="reason">{x}</p>' for x in fired),
            _when(item["deadline"], now), _when(item["expires"], now),
            _source(item["source"]) + f'<br><span class="muted">written {ago(item["created"], now)}</span>']


def render(data: dict[str, Any]) -> str:
    if not data["enabled"]:
        return pending.render_not_enabled("Obligations", data)
    now, counts = data["now"], data["counts"]
    out = ["<h1>Obligations</h1>", '<div class="stats">',
           stat("late", counts["late"], "bad" if counts["late"] else ""),
           stat("fired", counts["fired"], "ok" if counts["fired"] else ""),
           stat("lapsing", counts["lapsing"], "warn" if counts["lapsing"] else ""), stat("open", counts["open"]),
           stat("unknown state", counts["unknown"], "warn" if counts["unknown"] else ""), "</div>"]
    if not data["anchors"]:
        out.append('<p class="callout warn" id="no-anchor">No anchor in the team: nothing evaluates these conditions, '
                   f"so none of them can fire. An admin runs {h(ANCHOR)} and joins an always-on machine with it "
                   "(docs/anchor.md).</p>")
    if not data["current"]:
        out.append('<p class="callout warn">The index has obligation records it has not sorted yet: run '
                   "<code>gitive sync</code> (or keep the daemon running) and this page updates.</p>")
    out.append('<p class="muted">State: <strong>true</strong> the condition held (an anchor signed the firing), '
               "<strong>false</strong> still waiting, <strong>unknown</strong> no anchor can tell, with the reason. "
               "Change one at a terminal: <code>gitive obligation done|cancel|renew ID</code>.</p>")
    headers = ("id", "owner → beneficiary: action", "condition", "state", "deadline", "expires", "source")
    for key, title, meaning in SECTIONS:
        items = data["groups"][key]
        if not items and key == "closed":
            continue
        out.append(f'<section id="{key}"><h2>{h(title)} <span class="muted">{len(items)}</span></h2>')
        if items:
            out.append(html_table(f"{title}: {meaning}", headers, [_row(i, now) for i in items],
                                  cls=f"rows obligations {key}",
                                  row_attrs=[f'tabindex="0" data-obligation="{h(i["id"])}"' for i in items]))
        else:
            out.append(f'<p class="muted">None {h(meaning)}.</p>')
        out.append("</section>")
    if data["refused"]:
        rows = [[f'<code>{h(short(r["id"]))}</code>', h(r.get("change") or "obligation"), h(r["author"]),
                 h(r["problem"])] for r in data["refused"]]
        out.append('<section id="refused"><h2>Refused records</h2>'
                   + html_table("Records every reader refuses (they change nothing)", ("obligation", "record",
                                                                                      "by", "why"), rows, cls="rows")
                   + "</section>")
    if not any(data["groups"][k] for k in ("late", "fired", "lapsing", "open")):
        out.append(empty("Nothing open", ["Every obligation is closed. Record a promise with a condition:"], [OWE]))
    return "".join(out)
