"""The replay property over every decision kind (issue 23, item 1).

For each kind: a person writes an honest sequence of decisions (through the writer the CLI uses, with their
person key), then their agent, holding only the machine key, appends any mix of replays of those decisions, in
any order, stamped now, a day back or 23 hours ahead (``logs.append``). The writer's incremental index, a
rebuild, and a teammate after a sync must read exactly the honest state. Seeds make each case repeatable; the
count of cases tried and accepted is what the closing note reports.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gitive.core.clock import now_ms
from gitive.index import db, deciding, ingest
from gitive.team.hive import open_hive
from testing.lessons import propose
from testing.machines import Machine, _environ, alice_and_bob, on_index

HOUR, DAY = 3_600_000, 86_400_000
SEEDS = range(6)
STAMPS = (0, -DAY, 23 * HOUR)  # what the agent stamps its copies with, relative to now


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("decisions")
    with alice_and_bob(base) as (alice, bob, _):
        lessons = [propose(bob, f"Run make gen number {i} after editing api.proto") for i in range(len(SEEDS) + 4)]
        bob.ok("sync")
        alice.ok("sync")
        yield {"alice": alice, "bob": bob, "lessons": lessons, "tmp": base, "honest": []}


def _rebuilt(machine: Machine, path: Path, fn: Callable[[Any], Any]) -> Any:
    """``fn(conn)`` on an index built from nothing out of ``machine``'s stores (what `index rebuild` does)."""
    with _environ({"GITIVE_HOME": str(machine.home)}):
        hive = open_hive(machine.clone)
        with db.connect(path) as conn:
            ingest.ingest(conn, hive.stores(), hive.team_id, hive.founder, hive.me, key=hive.machine_key)
            return fn(conn)


def _decide(alice: Machine, record: dict[str, Any]) -> dict[str, Any]:
    """The honest writer: stamped and gestured as `gitive review` / `gate live` / `project confirm` do."""
    def write(hive: Any, conn: Any) -> dict[str, Any]:
        done = deciding.signed(hive.team_id, hive.me, record, alice.signer, conn)
        alice.append(done, "team")
        return done
    return on_index(alice, write)


# --- the kinds: (honest records for this seed, how a reader reads the state) ------------------------------------

def _lesson_reviews(rng: random.Random, w: dict[str, Any], seed: int) -> tuple[list[dict[str, Any]], Callable]:
    lesson = w["lessons"][seed]
    records = [{"type": "review", "about": lesson, "approver": "alice", "approved": rng.random() < 0.5,
                "note": f"take {i}", "scope": {"team": True}} for i in range(rng.randint(2, 4))]

    def state(conn: Any) -> Any:
        row = conn.execute("SELECT state FROM lesson_status WHERE lesson = ?", (lesson,)).fetchone()
        return row[0] if row else None
    return records, state


def _prepared_reviews(rng: random.Random, w: dict[str, Any], seed: int) -> tuple[list[dict[str, Any]], Callable]:
    from gitive.anchor.prepared import approvals

    task, diff, base = f"{seed + 1:064x}", "d" * 64, "b" * 40
    records = [{"type": "review", "about": task, "approver": "alice", "approved": rng.random() < 0.5,
                "note": "skip" if i % 2 else f"ok {i}", "scope": {"team": True}, "asker": "anchor",
                "diff_hash": diff, "base": base} for i in range(rng.randint(2, 4))]

    def state(conn: Any) -> Any:
        found = approvals.answer(conn, {"id": task, "owner": "alice"}, {"diff_hash": diff, "base": {"commit": base}},
                                 [])
        return (found["approved"], found["note"]) if found else None
    return records, state


def _gate_live(rng: random.Random, w: dict[str, Any], seed: int) -> tuple[list[dict[str, Any]], Callable]:
    from gitive.anchor.gate import gestures

    start = now_ms() + seed * 10_000
    records = [{"type": "gate-live", "person": "alice", "live": bool(i % 2 == 0), "ts": start + i, "actor": "person"}
               for i in range(rng.randint(2, 4))]

    def state(conn: Any) -> Any:
        return gestures.live_people(conn).get("alice")
    return records, state


def _project_grants(rng: random.Random, w: dict[str, Any], seed: int) -> tuple[list[dict[str, Any]], Callable]:
    from gitive.index import projects

    project = f"{seed + 0xabc:064x}"
    roles = ["member"] + [rng.choice(["member", "owner"]) for _ in range(rng.randint(0, 2))]
    records = [{"type": "project-member", "project": project, "person": "bob", "role": r, "confirmed": True}
               for r in roles]

    def state(conn: Any) -> Any:
        return projects.people(conn, project).get("bob")
    return records, state


def _retractions(rng: random.Random, w: dict[str, Any], seed: int) -> tuple[list[dict[str, Any]], Callable]:
    lesson = w["lessons"][len(SEEDS) + seed % 2]
    records = [{"type": "tombstone", "lesson": lesson, "reason": "wrong", "bodies": []}]

    def state(conn: Any) -> Any:
        row = conn.execute("SELECT state FROM lesson_status WHERE lesson = ?", (lesson,)).fetchone()
        return row[0] if row else None
    return records, state


def _obligation_changes(rng: random.Random, w: dict[str, Any], seed: int) -> tuple[list[dict[str, Any]], Callable]:
    """bob's obligation, which alice renews (a person acting on someone else's obligation: with her gesture)."""
    from gitive.index import obligations as table

    alice, bob = w["alice"], w["bob"]
    now = now_ms()
    record = {"type": "obligation", "owner": "bob", "condition": 'e.event.action == "vcs.merged"',
              "action": f"drop the grace period {seed}", "expires": now + 7 * DAY, "created": now,
              "source": {"kind": "owe"}, "vocabulary": 1, "actor": "agent"}
    record["id"] = table.obligation_id(bob.id, record)
    bob.append(record, "team")
    bob.ok("sync")
    alice.ok("sync")
    records = [{"type": "obligation-state", "obligation": record["id"], "state": "renewed", "actor": "person",
                "expires": now + (8 + i) * DAY} for i in range(rng.randint(2, 3))]

    def state(conn: Any) -> Any:
        table.refresh(conn)
        return conn.execute("SELECT state, expires FROM obligations WHERE id = ?", (record["id"],)).fetchone()
    return records, state


KINDS = {"review": _lesson_reviews, "prepared-review": _prepared_reviews, "gate-live": _gate_live,
         "project-member": _project_grants, "tombstone": _retractions, "obligation-state": _obligation_changes}
TRIED: dict[str, int] = {}
ACCEPTED: dict[str, int] = {}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("kind", list(KINDS))
def test_replays_leave_every_reader_at_the_honest_state(world: dict[str, Any], kind: str, seed: int) -> None:
    rng = random.Random(f"{kind}/{seed}")
    alice = world["alice"]
    records, state = KINDS[kind](rng, world, seed)
    written = [_decide(alice, r) for r in records]
    honest = on_index(alice, lambda hive, conn: state(conn))
    attacks = [(rng.choice(written), rng.choice(STAMPS)) for _ in range(rng.randint(1, 3))]
    for record, offset in attacks:  # the agent: any copies, any order, any stamp the entry allows
        alice.append(record, "team", at=now_ms() + offset)
    after = on_index(alice, lambda hive, conn: state(conn))
    rebuilt = _rebuilt(alice, world["tmp"] / f"rebuild-{kind}-{seed}.sqlite", state)
    world["honest"].append((state, honest))
    TRIED[kind] = TRIED.get(kind, 0) + len(attacks)
    ACCEPTED[kind] = ACCEPTED.get(kind, 0) + (after != honest or rebuilt != honest) * len(attacks)
    assert after == honest and rebuilt == honest, (kind, records, attacks)


def test_a_teammate_reads_every_honest_state_after_a_sync(world: dict[str, Any]) -> None:
    alice, bob = world["alice"], world["bob"]
    alice.ok("sync")
    bob.ok("sync")
    # gate-live has one subject per person: a later case's honest state stands for the earlier ones
    last = {state.__qualname__.split(".")[0]: honest for state, honest in world["honest"]}
    states = {state.__qualname__.split(".")[0]: state for state, _ in world["honest"]}
    seen = on_index(bob, lambda hive, conn: {k: s(conn) for k, s in states.items()})
    assert seen == last
    every = on_index(bob, lambda hive, conn: [state(conn) for state, _ in world["honest"]])
    assert every == on_index(alice, lambda hive, conn: [state(conn) for state, _ in world["honest"]])
    print(f"\nreplay attacks tried {TRIED}, accepted {ACCEPTED}")


def _status(machine: Machine, lesson: str) -> str:
    return on_index(machine, lambda hive, conn: conn.execute(
        "SELECT state FROM lesson_status WHERE lesson = ?", (lesson,)).fetchone()[0])


def _legacy(alice: Machine, record: dict[str, Any]) -> dict[str, Any]:
    """A review as gitive wrote it before decisions were stamped (decision format v1): gesture, no ``decided``."""
    def write(hive: Any, conn: Any) -> dict[str, Any]:
        done = deciding.signed(hive.team_id, hive.me, record, alice.signer)
        alice.append(done, "team")
        return done
    return on_index(alice, write)


def test_v1_reviews_still_count_once_and_yield_to_stamped_ones(world: dict[str, Any]) -> None:
    alice = world["alice"]
    lesson = world["lessons"][len(SEEDS) + 2]
    review = {"type": "review", "about": lesson, "approver": "alice", "note": "", "scope": {"team": True}}
    approve = _legacy(alice, {**review, "approved": True})
    assert "decided" not in approve and _status(alice, lesson) == "verified"  # a team's v1 lessons stay verified
    reject = _legacy(alice, {**review, "approved": False})
    assert _status(alice, lesson) == "rejected"
    alice.append(approve, "team", at=now_ms() + 23 * HOUR)  # the v1 replay: one more copy of a counted gesture
    assert _status(alice, lesson) == "rejected"
    _decide(alice, {**review, "approved": True})  # stamped: after every v1 decision of alice on it
    alice.append(reject, "team", at=now_ms() + 23 * HOUR)
    assert _status(alice, lesson) == "verified"
    assert _rebuilt(alice, world["tmp"] / "rebuild-v1.sqlite", lambda conn: conn.execute(
        "SELECT state FROM lesson_status WHERE lesson = ?", (lesson,)).fetchone()[0]) == "verified"


def test_an_index_from_before_decisions_migrates_to_what_a_rebuild_reads(world: dict[str, Any]) -> None:
    """Index step 0012 on an index that already holds v1 and stamped decisions and replays of both."""
    alice = world["alice"]
    old = world["tmp"] / "old-index.sqlite"
    query = "SELECT lesson, state FROM lesson_status ORDER BY lesson"
    _rebuilt(alice, old, lambda conn: None)
    with db.connect(old) as conn:  # back to the shape of an index from before step 0012, states gone stale
        conn.execute("DROP TABLE decisions")
        for statement in db._DECISION_VIEWS.format(reviews="1", tombstones="1", project_members="1").split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.execute("DELETE FROM migrations WHERE name = '0012-decisions'")
        conn.execute("UPDATE lesson_status SET state = 'proposed'")
    with db.connect(old) as conn:  # step 0012 runs now
        migrated = conn.execute(query).fetchall()
    assert migrated == _rebuilt(alice, world["tmp"] / "rebuild-m.sqlite", lambda conn: conn.execute(query).fetchall())


def test_a_decision_dated_ahead_counts_only_from_its_time(world: dict[str, Any]) -> None:
    from gitive.core import decisions, gesture

    alice = world["alice"]
    lesson = world["lessons"][len(SEEDS) + 3]
    now = now_ms()
    record = decisions.stamp({"type": "review", "about": lesson, "approver": "alice", "approved": True, "note": "",
                              "scope": {"team": True}}, now + HOUR, 1)
    alice.append(gesture.sign(alice.signer, alice.team_id, alice.id, record), "team")
    assert alice.json("lessons", "show", lesson)["state"] == "proposed"
    later = {"GITIVE_NOW_MS": str(now + HOUR - decisions.SKEW_MS + 1)}
    assert alice.json("lessons", "show", lesson, env=later)["state"] == "verified"  # the read path ripened it
    alice.ok("index", "rebuild", env=later)
    assert alice.json("lessons", "show", lesson, env=later)["state"] == "verified"
