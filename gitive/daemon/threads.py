"""Message threads: a message, what it answers and every answer to it, among the messages this person may read.

Those are the messages this machine's sessions received (the daemon's ``inbox``) and the verified messages any
of this person's machines sent (the index). A thread follows ``reply_to`` both ways from the message asked for;
a message someone else sent to someone else is never in it, though the mail log that holds it is readable.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from gitive.errors import GitiveError


def _readable(index: sqlite3.Connection, db: sqlite3.Connection, person: str) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for mid, sender, to, body, reply_to, at in db.execute(
            "SELECT id, sender, to_session, body, reply_to, received_at FROM inbox ORDER BY received_at"):
        found.setdefault(mid, {"id": mid, "from": sender, "to": to, "body": body, "reply_to": reply_to, "at": at,
                               "direction": "received"})
    for at, envelope in index.execute(
            "SELECT e.at, e.envelope FROM admitted_entries e JOIN members m ON m.machine = e.author "
            "WHERE e.kind = 'message' AND m.person = ?", (person,)):
        r = json.loads(envelope)["body"]["record"]
        found[r["id"]] = {"id": r["id"], "from": r["from"], "to": r["to"], "body": r["body"],
                          "reply_to": r.get("reply_to"), "at": at, "direction": "sent"}
    return found


def resolve(messages: dict[str, dict[str, Any]], text: str) -> str:
    """The id of the readable message ``text`` names (a ULID, or at least 8 of its first characters).

    Raises:
        GitiveError: none or several.
    """
    key = text.strip().upper()
    hits = [m for m in messages if m.upper().startswith(key)] if 8 <= len(key) <= 26 else []
    if len(hits) != 1:
        what = "no message you may read" if not hits else f"{len(hits)} messages"
        raise GitiveError(f"{what} has an id starting {text[:30]!r}; `gitive inbox` and `inbox --sent` list them")
    return hits[0]


def thread(index: sqlite3.Connection, db: sqlite3.Connection, person: str, message: str) -> list[dict[str, Any]]:
    """The thread around ``message`` (an id or a prefix), oldest first, each with ``depth`` (0: its root).

    Raises:
        GitiveError: no readable message has that id.
    """
    messages = _readable(index, db, person)
    start = resolve(messages, message)
    root = start
    seen = {root}
    while (parent := messages[root].get("reply_to")) in messages and parent not in seen:
        root = parent
        seen.add(root)
    children: dict[str, list[str]] = {}
    for m in messages.values():
        if m.get("reply_to"):
            children.setdefault(m["reply_to"], []).append(m["id"])
    out: list[dict[str, Any]] = []
    todo = [(root, 0)]
    done: set[str] = set()
    while todo:
        mid, depth = todo.pop(0)
        if mid in done:
            continue
        done.add(mid)
        out.append(messages[mid] | {"depth": depth})
        todo += [(c, depth + 1) for c in sorted(children.get(mid, []), key=lambda c: messages[c]["at"])]
    return sorted(out, key=lambda m: (m["at"], m["id"]))
