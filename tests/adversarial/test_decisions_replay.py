"""An agent with only its person's machine key replays that person's signed decisions (issue 23, item 1).

Alice approves a lesson, then rejects it, each with her passphrase. Her agent re-appends the old approval,
gesture and all, with ``logs.append`` (as the issue saw it done), stamped now or a day ahead, and syncs. Every
reader must keep reading alice's last decision: a replay is counted nowhere and reported by ``doctor``.
"""

from __future__ import annotations

from typing import Any

import pytest

from gitive.core.clock import now_ms
from gitive.store import logs, refs
from testing.lessons import propose
from testing.machines import Machine, restored_alice_and_bob

HOUR = 3_600_000


@pytest.fixture
def team(place: Any) -> list[Machine]:
    """alice (admin) and bob (restored, not founded again); a lesson by bob."""
    alice, bob, _ = restored_alice_and_bob(place)
    propose(bob, "Run make gen after editing api.proto")
    bob.ok("sync")
    alice.ok("sync")
    return [alice, bob]


def _reviews_by(machine: Machine) -> list[tuple[str, dict[str, Any]]]:
    """(log, record) of every review in ``machine``'s own logs, oldest first."""
    found = []
    repo = machine.repo
    for name in refs.tips(repo, f"refs/hive/logs/{machine.id}/"):
        for entry in logs.entries(repo, name):
            if entry.body["record"]["type"] == "review":
                found.append((entry.seq, entry.body["log"], entry.body["record"]))
    return [(log, record) for _, log, record in sorted(found, key=lambda f: f[0])]


def _state(machine: Machine, lesson: str) -> str:
    return machine.json("lessons", "show", lesson)["state"]


def _lesson(alice: Machine) -> str:
    return alice.json("lessons", "list", "--state", "proposed")[0]["id"]


@pytest.mark.parametrize("ahead", [0, 23 * HOUR])
@pytest.mark.parametrize("first", [True, False])
def test_a_replayed_review_changes_no_reader(team: list[Machine], first: bool, ahead: int) -> None:
    """first=True: approve, reject, replay the approval; False: reject, approve, replay the rejection."""
    alice, bob = team
    lesson = _lesson(alice)
    verdicts = ["approve", "reject"] if first else ["reject", "approve"]
    for verdict in verdicts:
        alice.decided("review", verdict, lesson)
    honest = "rejected" if first else "verified"
    alice.ok("sync")
    bob.ok("sync")
    assert _state(bob, lesson) == honest
    (log, replayed), _ = _reviews_by(alice)
    alice.append(replayed, log, at=now_ms() + ahead)  # the agent: machine key only, gesture copied
    alice.ok("sync")
    bob.ok("sync")
    for reader in (alice, bob):
        assert _state(reader, lesson) == honest
        reader.ok("index", "rebuild")
        assert _state(reader, lesson) == honest
    doctor = bob.run("doctor", "--json")
    assert doctor.code != 0
    assert [p["kind"] for p in doctor.json()["problems"]] == ["replay"], doctor
