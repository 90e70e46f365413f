"""A person's decision copied into another machine's log displaces nothing (found while building issue 23's
project links): a gesture binds the machine that wrote it, so bob's agent appending alice's review or grant to
bob's own log, dated a day back, used to become the decision's "first appearance" and turn alice's real one into
a replay: her approved lesson read proposed again, on every reader and after a rebuild."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from gitive.core.clock import now_ms
from gitive.store import logs
from gitive.team.hive import open_hive
from testing.lessons import propose
from testing.machines import Machine, _environ, alice_and_bob

DAY = 86_400_000


def _decisions_of(machine: Machine, author: str) -> list[tuple[str, str, str]]:
    """(kind, log, scope) and record of every gestured decision ``author`` wrote, from ``machine``'s index."""
    with _environ({"GITIVE_HOME": str(machine.home)}):
        path = open_hive(machine.clone).index_path
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT log, scope, envelope FROM entries WHERE author = ? AND kind IN "
                            "('review', 'project-member') AND envelope LIKE '%\"gesture\"%'", (author,)).fetchall()


def test_a_members_backdated_copy_of_an_admins_decisions_changes_nothing(tmp_path: Path) -> None:
    with alice_and_bob(tmp_path) as (alice, bob, _):
        lesson = propose(bob, "Run make gen after editing api.proto")
        bob.ok("sync")
        alice.ok("sync")
        alice.decided("project", "confirm", "bob")
        alice.decided("review", "approve", lesson)
        alice.ok("sync")
        bob.ok("sync")
        before = (bob.json("lessons", "show", lesson)["state"], bob.json("project")["people"])
        assert before[0] == "verified" and before[1]["bob"]["confirmed"] is True
        copied = _decisions_of(bob, alice.id)
        assert len(copied) >= 2  # alice's grant of her own ownership at init, bob's confirmation, the review
        for log, scope, envelope in copied:  # bob's agent: alice's decisions, gesture and all, a day back
            record = json.loads(envelope)["body"]["record"]
            own_log = bob.project_log if log.startswith("project-") else log
            logs.append(bob.repo, bob.key, bob.team_id, own_log, json.loads(scope), record, at=now_ms() - DAY)
        bob.ok("sync")
        alice.ok("sync")
        for m in (alice, bob):
            assert (m.json("lessons", "show", lesson)["state"], m.json("project")["people"]) == before, m.name
        bob.ok("index", "rebuild")
        assert (bob.json("lessons", "show", lesson)["state"], bob.json("project")["people"]) == before
        print(f"\ncopied decisions tried {len(copied)}, accepted 0")
