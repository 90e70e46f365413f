"""Next: what needs this machine's person now, most unblocking first: the same rows as ``gitive next``.

The rows come from :func:`gitive.needs.queue.build`, the function the command calls, over the read-only index and
a read-only look at this machine's daemon database (held mail and unread messages are this machine's). Titles come
from the local records (a lesson's text, a draft's brief, an item's title); the ledger stays metadata-only. An
anchor machine has no person to need: the page says so.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from gitive.errors import GitiveError
from gitive.needs import local, queue
from gitive.team.hive import Hive
from gitive.ui.html import ago, badge, command, empty, h, short, stat
from gitive.ui.html import table as html_table

LABELS = {"draft": "draft to review", "held": "held mail", "obligation": "you owe", "lesson": "lesson to review",
          "item": "from the anchor", "message": "unread message"}


def person_of(conn: sqlite3.Connection, me: str) -> str:
    """This machine's person.

    Raises:
        GitiveError: an anchor machine, or a machine not (or no longer) on the roster.
    """
    from gitive.anchor.gate import gestures

    return gestures.person_here(conn, me)


def collect(hive: Hive, conn: sqlite3.Connection, now: int) -> dict[str, Any]:
    try:
        person = person_of(conn, hive.me)
    except GitiveError as exc:
        return {"view": "next", "person": None, "reason": str(exc), "rows": [], "counts": {}, "now": now}
    with local.open_readonly() as db:
        rows = queue.build(conn, db, person, now, repo=hive.project)
    counts = {kind: sum(1 for r in rows if r.kind == kind) for kind in queue.KINDS}
    return {"view": "next", "person": person, "rows": [r.as_json(now) for r in rows], "counts": counts, "now": now}


def _row(r: dict[str, Any], now: int) -> list[str]:
    account = f'<p class="account">{h(r["account"])}</p>' if r.get("account") and r["kind"] != "item" else ""
    return [badge(LABELS[r["kind"]], r["kind"]) + f'<br><code>{h(short(r["id"]))}</code>', ago(r["at"], now),
            f'<strong class="title">{h(r["title"])}</strong><p class="why">{h(r["why"])}</p>{account}',
            command(r["act"])]


def render(data: dict[str, Any]) -> str:
    if data["person"] is None:
        return ("<h1>Next</h1>" + empty("No person on this machine", [h(data["reason"])],
                                        ["gitive ui   # on a person's own machine"]))
    rows, now = data["rows"], data["now"]
    out = [f"<h1>Next <span class=\"muted\">for {h(data['person'])}</span></h1>", '<div class="stats">',
           stat("need you", len(rows), "warn" if rows else "ok"),
           *[stat(LABELS[k], n) for k, n in data["counts"].items() if n], "</div>"]
    if not rows:
        out.append(empty("Nothing needs you now", ["No draft, lesson or held message waits for you, you owe nothing "
                                                   "that fired or lapses soon, and every message was read."],
                         ["gitive next"]))
        return "".join(out)
    out.append('<p class="muted">Most unblocking first: drafts, held mail, what you owe, reviews, the anchor\'s '
               "items, messages. Act at a terminal with the command on each row (this page changes nothing).</p>")
    out.append(html_table("What needs you now", ("what", "waiting", "why", "to act, at a terminal"),
                          [_row(r, now) for r in rows], cls="rows next",
                          row_attrs=[f'tabindex="0" data-kind="{h(r["kind"])}" data-id="{h(r["id"])}"' for r in rows]))
    return "".join(out)
