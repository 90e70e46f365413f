"""Mail: the messages this machine's sessions received, those held for a person, and those this machine sent with
their acks, read-only.

Received and held mail live in this machine's daemon database (opened ``mode=ro`` through :mod:`gitive.needs.local`:
the page cannot change a state), sent mail in the mail log (:mod:`gitive.index.mail`); neither loads the daemon.
Every body is a teammate's text and is escaped. Answering, releasing and searching stay at the terminal; each row names the command.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from gitive.index import mail
from gitive.needs import local
from gitive.team.hive import Hive
from gitive.ui.html import ago, badge, command, empty, h, stat
from gitive.ui.html import table as html_table

SHOWN = 100
SEND = 'gitive send alice/api-claude "did you change the token format?"'


def collect(hive: Hive, conn: sqlite3.Connection, now: int) -> dict[str, Any]:
    with local.open_readonly() as db:
        received = local.received(db, SHOWN)
    sent = mail.sent(conn, hive.me, limit=SHOWN)
    return {"view": "mail", "received": received, "held": [m for m in received if m["state"] == "held"],
            "sent": sent, "unread": sum(1 for m in received if m["state"] in local.UNREAD),
            "now": now}


def _received_row(m: dict[str, Any], now: int) -> list[str]:
    state = badge(m["state"], {"held": "warn", "refused": "bad", "read": "ok"}.get(m["state"], ""))
    reason = f'<p class="reason">{h(m["reason"])}</p>' if m["reason"] else ""
    answers = f'<p class="muted">answers <code>{h(m["reply_to"])}</code></p>' if m["reply_to"] else ""
    act = f"gitive release {m['id']}" if m["state"] == "held" else f"gitive send --reply {m['id']} \"…\""
    return [ago(m["received_at"], now), f'<strong>{h(m["from"])}</strong> → {h(m["to_session"])}',
            state + reason, f'<p class="body">{h(m["body"][:2000])}</p>{answers}',
            command(act) + "<br>" + command(f"gitive inbox --thread {m['id']}")]


def _sent_row(m: dict[str, Any]) -> list[str]:
    acks = ", ".join(f"{a['state']} by {a['session']}" for a in m["acks"]) or "no ack yet"
    return [f'<code>{h(m["id"])}</code>', h(m["to"]), f'<p class="body">{h(m["body"])}</p>', h(acks),
            command(f"gitive inbox --thread {m['id']}")]


def render(data: dict[str, Any]) -> str:
    now = data["now"]
    out = ["<h1>Mail</h1>", '<div class="stats">', stat("received here", len(data["received"])),
           stat("unread", data["unread"], "warn" if data["unread"] else ""),
           stat("held for you", len(data["held"]), "warn" if data["held"] else ""),
           stat("sent from here", len(data["sent"])), "</div>",
           '<p class="muted">Read-only. Reply, release and search at a terminal: the command is on each row.</p>']
    out.append('<section id="received"><h2>Received</h2>')
    if data["received"]:
        out.append(html_table("Messages to this machine's sessions, newest first",
                              ("when", "from → session", "state", "message", "at a terminal"),
                              [_received_row(m, now) for m in data["received"]], cls="rows mail received",
                              row_attrs=[f'tabindex="0" data-message="{h(m["id"])}"' for m in data["received"]]))
    else:
        out.append(empty("No mail received here", ["Messages arrive once this machine's daemon syncs."],
                         ["gitive daemon start"]))
    out.append('</section><section id="sent"><h2>Sent</h2>')
    if data["sent"]:
        out.append(html_table("Messages this machine sent, newest first, with the acks that came back",
                              ("id", "to", "message", "acks", "thread"), [_sent_row(m) for m in data["sent"]],
                              cls="rows mail sent",
                              row_attrs=[f'tabindex="0" data-message="{h(m["id"])}"' for m in data["sent"]]))
    else:
        out.append(empty("Nothing sent from this machine", [], [SEND]))
    out.append("</section>")
    return "".join(out)
