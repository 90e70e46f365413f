"""What the daemon hands a hook: whole items that fit the reply's room, a message over the harness's cap one
part per reply (each part its own frame), the message delivered with its last part, and items a hook never
read put back at once."""

from __future__ import annotations

import re
import sqlite3

import pytest

from gitive.capture import framing
from gitive.daemon import mailbox
from gitive.daemon.db import SCHEMA, _add_columns

PEER = "b" * 64
_BODY = re.compile(r'<team-message from="bob/x" id="(?P<id>[^"]+)"(?: part="(?P<k>\d+) of (?P<n>\d+)")?>\n'
                   r"(?P<body>.*?)\n</team-message>", re.DOTALL)


@pytest.fixture
def db() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.executescript(SCHEMA)
    return conn


def queue(db: sqlite3.Connection, message_id: str, body: str, session: str = "s") -> None:
    db.execute("INSERT INTO inbox (id, sender, sender_machine, to_session, body, from_person, state, received_at) "
               "VALUES (?, 'bob/x', ?, ?, ?, 0, 'queued', 1)", (message_id, PEER, session, body))


def state(db: sqlite3.Connection, message_id: str) -> tuple[str, int, int]:
    return db.execute("SELECT state, sent_upto, parts_done FROM inbox WHERE id = ?", (message_id,)).fetchone()


def size(text: str) -> int:
    return len(text.encode())


def test_items_go_out_whole_and_in_order_while_they_fit_the_room(db: sqlite3.Connection) -> None:
    for n in range(5):
        queue(db, f"m{n}", f"note {n} " * 40)
    first = mailbox.pending(db, "s", room=1500, cap=9000)
    assert [i["id"] for i in first] == ["m0", "m1", "m2"][: len(first)] and 1 <= len(first) < 5
    assert sum(size(i["frame"]) for i in first) + 2 * (len(first) - 1) <= 1500
    assert all(i["frame"] == mailbox.frame((i["id"], "bob/x", f"note {i['id'][1]} " * 40, 0)) for i in first)
    assert mailbox.pending(db, "s", room=0, cap=9000) == []  # no room: nothing is handed out


def test_a_message_over_the_cap_goes_out_one_part_per_reply_and_is_delivered_with_the_last(
        db: sqlite3.Connection) -> None:
    body = "\n".join(f"line {n}: " + "word " * 30 for n in range(120)) + " <team-message>"
    queue(db, "m1", body)
    parts = []
    while True:
        items = mailbox.pending(db, "s", room=8000, cap=8000)
        if not items:
            break
        [item] = items
        assert size(item["frame"]) <= 8000 and item["id"].startswith("m1#")
        parts.append(item)
        assert state(db, "m1")[0] == "inflight"
        assert mailbox.confirm(None, db, [item["id"]], "s", "delivered") == [item["id"]]
    found = [_BODY.search(p["frame"]) for p in parts]
    assert [int(m["k"]) for m in found] == list(range(1, len(parts) + 1)) and len(parts) == 3
    assert {int(m["n"]) for m in found} == {len(parts)}
    assert "Part 1 of" in parts[0]["frame"] and "next part comes at a later tool call" in parts[0]["frame"]
    # Each part ends at a line break (trimmed by its frame): together they hold every word of the message.
    assert "\n".join(m["body"] for m in found).split() == framing.defang(body).split()
    assert all(m["body"].startswith("line ") for m in found)
    assert state(db, "m1")[0] == "delivered"


def test_a_part_that_does_not_fit_the_room_waits(db: sqlite3.Connection) -> None:
    queue(db, "m1", "word " * 4000)
    assert mailbox.pending(db, "s", room=3000, cap=8000) == []  # the lessons took the rest of this reply
    assert state(db, "m1") == ("queued", 0, 0)
    [item] = mailbox.pending(db, "s", room=8000, cap=8000)
    assert item["id"].startswith("m1#1/")


def test_an_old_or_repeated_part_confirmation_never_moves_a_message_back_or_past_a_part(
        db: sqlite3.Connection) -> None:
    queue(db, "m1", "word " * 4000)
    [one] = mailbox.pending(db, "s", room=8000, cap=8000)
    mailbox.confirm(None, db, [one["id"]], "s", "delivered")
    after_one = state(db, "m1")
    assert after_one[0] == "queued" and after_one[2] == 1
    [two] = mailbox.pending(db, "s", room=8000, cap=8000)
    assert mailbox.confirm(None, db, [one["id"]], "s", "delivered") == []  # the first part again: nothing
    assert state(db, "m1")[0] == "inflight"
    mailbox.confirm(None, db, [two["id"]], "s", "delivered")
    assert state(db, "m1")[2] == 2


def test_items_a_hook_never_read_are_put_back_at_once(db: sqlite3.Connection) -> None:
    queue(db, "m1", "hello")
    queue(db, "m2", "again")
    handed = mailbox.pending(db, "s", room=9000, cap=9000)
    assert [i["id"].split("#")[0] for i in handed] == ["m1", "m2"]
    assert mailbox.pending(db, "s") == []  # in flight: not handed out twice
    mailbox.unhand(db, "s", [i["id"] for i in handed])
    assert [i["id"] for i in mailbox.pending(db, "s", room=9000, cap=9000)] == [i["id"] for i in handed]


def test_an_older_database_gets_the_part_columns_and_its_rows_read_as_unsplit() -> None:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.executescript(SCHEMA.replace(", sent_upto INTEGER NOT NULL DEFAULT 0,\n    parts_done INTEGER NOT NULL "
                                      "DEFAULT 0", ""))
    assert "sent_upto" not in {r[1] for r in conn.execute("PRAGMA table_info(inbox)")}
    conn.execute("INSERT INTO inbox (id, sender, sender_machine, to_session, body, from_person, state, received_at) "
                 "VALUES ('m1', 'bob/x', ?, 's', 'from before', 0, 'queued', 1)", (PEER,))
    _add_columns(conn)
    _add_columns(conn)  # twice is harmless
    [item] = mailbox.pending(conn, "s")
    assert item["id"] == "m1" and "from before" in item["frame"]
