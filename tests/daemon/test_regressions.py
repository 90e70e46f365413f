"""Regressions found by the daemon's integration tests."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from types import SimpleNamespace

from gitive.core.home import ensure_home
from gitive.daemon import control, mailbox
from gitive.daemon.db import SCHEMA
from gitive.daemon.runner import LOCK

ME = "a" * 64
PEER = "b" * 64


def _index_with(message: dict) -> sqlite3.Connection:
    index = sqlite3.connect(":memory:")
    index.executescript("CREATE TABLE entries(author, log, seq, commit_id, kind, at, scope, envelope);"
                        "CREATE TABLE members(machine, person, name, role, active, emails, ts, via, depth);")
    index.execute("INSERT INTO members VALUES (?, 'bob', 'desk', 'member', 1, '[]', 1, 'invite', 1)", (PEER,))
    envelope = json.dumps({"body": {"record": message}})
    index.execute("INSERT INTO entries VALUES (?, 'mail', 1, 'c1', 'message', 1, '{}', ?)", (PEER, envelope))
    return index


def test_a_message_to_two_sessions_on_one_machine_reaches_both() -> None:
    message = {"type": "message", "id": "01M8MD3S3YEH7158R5P9N22RZE", "from": "bob/terminal", "to": "alice/*",
               "body": "standup in five", "from_person": True,
               "recipients": [{"machine": ME, "session": "a-claude"}, {"machine": ME, "session": "a-claude-2"}]}
    db = sqlite3.connect(":memory:")
    db.executescript(SCHEMA)
    added = mailbox.ingest(_index_with(message), db, ME, "alice", lambda msg: SimpleNamespace(action="accept",
                                                                                                reason=""))
    assert added == 2
    assert [len(mailbox.pending(db, s)) for s in ("a-claude", "a-claude-2")] == [1, 1]


def test_a_reply_carries_a_bounded_amount_of_text() -> None:
    db = sqlite3.connect(":memory:")
    db.executescript(SCHEMA)
    for n in range(40):
        db.execute("INSERT INTO inbox (id, sender, sender_machine, to_session, body, from_person, state, "
                   "received_at) VALUES (?, 'bob/x', ?, 's', ?, 0, 'queued', 1)", (f"m{n:02d}", PEER, "x" * 350))
    first = mailbox.pending(db, "s", room=5000)
    assert 1 <= len(first) < 40 and sum(len(i["frame"].encode()) + 2 for i in first) <= 5000 + 2


def test_stop_never_signals_a_pid_left_in_an_unheld_lock_file() -> None:
    bystander = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        (ensure_home() / LOCK).write_text(str(bystander.pid))
        assert control.stop(timeout=1) is None
        assert bystander.poll() is None  # still alive
    finally:
        bystander.kill()
        bystander.wait()
