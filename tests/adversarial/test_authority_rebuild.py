"""Incremental = rebuild under the authority attacks (docs/verification.md §3, §4), on real git.

The moves of ``testing.rebuild`` plus four hostile ones: a removed member writing backdated entries, a member
granting itself project ownership, an anchor's decisions, and an honest gesture copied into another machine's
log. The comparison also covers what the authority rules decide: entries admitted by position, person keys,
removal gaps, project membership.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

rebuild = pytest.importorskip("testing.rebuild")  # the harness of the verification work

from gitive.core import gesture  # noqa: E402
from gitive.core.clock import now_ms  # noqa: E402
from gitive.store import logs, refs  # noqa: E402
from testing.machines import note  # noqa: E402

EXTRA: dict[str, Any] = dict(rebuild.MOVES)
_BASE = rebuild.normalized
LONG_AGO = 1_600_000_000_000  # before the team existed


def normalized(conn: Any) -> dict[str, Any]:
    out = _BASE(conn)
    out.update({
        "admitted": conn.execute("SELECT author, log, seq FROM admitted_entries ORDER BY 1, 2, 3").fetchall(),
        "person_keys": conn.execute("SELECT * FROM person_keys ORDER BY 1, 2").fetchall(),
        "gaps": conn.execute("SELECT machine, log, lo, hi FROM member_gaps ORDER BY 1, 2, 3").fetchall(),
        "admins": conn.execute("SELECT * FROM admins ORDER BY 1").fetchall(),
        "projects": conn.execute("SELECT project, person, role, confirmed, signer, decides, exempt "
                                 "FROM valid_project_members ORDER BY 1, 2, 3, 4, 5").fetchall(),
    })
    return out


@pytest.fixture(autouse=True)
def _authority_views(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rebuild, "normalized", normalized)


def _active(world: Any, machine: Any) -> bool:
    members = {m["machine"]: m["active"] for m in world.alice.json("team")["members"]}
    return bool(members.get(machine.id))


def _backdated(rng: random.Random) -> int | None:
    return rng.choice([None, LONG_AGO, 1_700_000_000_000])


@rebuild.move(EXTRA, "a removed member backdates")
def removed_backdates(world: Any, rng: random.Random) -> None:
    alice, bob = world.alice, world.bob
    if _active(world, bob):
        alice.decide("team", "remove", "bob")
    for _ in range(rng.randint(1, 3)):  # bob's machine key, used directly: what an agent with a shell can do
        record = rng.choice([note(f"late {rng.randrange(10**6)}", alice.id),
                             {"type": "citation", "lesson": "ab" * 32, "session": f"s{rng.randrange(99)}",
                              "success": True, "tests_passed": True, "reverted": False}])
        bob.append(record, log=rng.choice(["team", "project"]), at=_backdated(rng))
    bob.run("sync")
    rebuild._then_a_reader_syncs(world, rng)


@rebuild.move(EXTRA, "a member grants itself project ownership")
def self_granted(world: Any, rng: random.Random) -> None:
    bob = world.bob
    from gitive.team.projects import project_id

    record = {"type": "project-member", "project": project_id(bob.repo), "person": "bob", "role": "owner",
              "confirmed": True}
    bob.append(gesture.sign(bob.signer, bob.team_id, bob.id, record), log="roster", at=_backdated(rng))
    bob.run("sync")
    rebuild._then_a_reader_syncs(world, rng)


@rebuild.move(EXTRA, "an anchor decides")
def anchor_decides(world: Any, rng: random.Random) -> None:
    alice, anchor = world.alice, world.mallory
    if not any(m["machine"] == anchor.id for m in alice.json("team")["members"]):
        record = {"type": "member", "machine": anchor.id, "person": "anchor", "name": "anchor", "role": "anchor",
                  "active": True, "emails": [], "ts": now_ms()}  # an admin admits the anchor machine
        alice.append(gesture.sign(alice.signer, alice.team_id, alice.id, record), log="roster")
        alice.run("sync")
    decisions = [
        {"type": "review", "about": "ab" * 32, "approver": "anchor", "approved": True, "note": ""},
        {"type": "member", "machine": world.bob.id, "person": "bob", "name": "desk", "role": "member",
         "active": False, "emails": [], "ts": 2_000_000_000_000, "heads": {}},
    ]
    record = rng.choice(decisions)
    log = "roster" if record["type"] == "member" else "team"
    signer = alice.signer if rng.random() < 0.5 else anchor.signer  # even alice's own key does not help
    logs.append(anchor.repo, world.mallory_key, alice.team_id, log, {"team": True},
                gesture.sign(signer, alice.team_id, anchor.id, record))
    ref = refs.log_ref(anchor.id, log)
    anchor.git("push", "--quiet", "--force", "origin", ref)
    rebuild._then_a_reader_syncs(world, rng)


@rebuild.move(EXTRA, "a gesture copied into another machine's log")
def copied_gesture(world: Any, rng: random.Random) -> None:
    alice, bob = world.alice, world.bob
    lesson = f"{rng.randrange(16**8):08x}" * 8
    review = {"type": "review", "about": lesson, "approver": "alice", "approved": True, "note": ""}
    honest = gesture.sign(alice.signer, alice.team_id, alice.id, review)
    alice.append(honest)
    copied = {**review, "approver": rng.choice(["alice", "bob"])}
    copied["gesture"] = honest["gesture"]
    bob.append(copied)
    for m in (alice, bob):
        m.run("sync")
    rebuild._then_a_reader_syncs(world, rng)


TestIncrementalEqualsRebuildUnderAuthorityAttacks = rebuild.machine_test(EXTRA)


# --- the sequence found when the world was first restored in place (same keys, same seeds, same gestures) -----

def _copy(world: Any, seed: int) -> None:
    EXTRA["a gesture copied into another machine's log"](world, random.Random(seed))


def _rewrap(world: Any, ref: str, which: int) -> None:
    """Push ``ref``'s entry at index ``which`` re-wrapped (another commit message) as the ref's tip; a reader
    syncs."""
    chain = world.remote_entries(ref)
    from testing import hostile

    world.push(world.mallory, hostile.rewrap(world.mallory.repo, chain[which], message="re\n"), ref)
    world.readers[0].run("sync")
    world.readers[1].run("sync")


@pytest.mark.slow
@pytest.mark.parametrize("target", ["alice-first-copy", "alice-replayed-copy", "bob-lifted-copy"])
def test_same_gesture_copies_rewrapped_then_equivocation(target: str, seed: int = 0) -> None:
    """The same honest review appended twice (identical gesture: the same key signs the same bytes) with copies
    lifted into bob's log, one of those entries re-wrapped on the remote, a third copy, and bob's stolen key
    writing at bob's place: after every step each reader's index equals a rebuild from its refs. (Before copies
    had to verify for their own author, bob's lifted copies stayed replays in the incremental index only.)"""
    world = rebuild.World.restored(rebuild._root())
    for _ in range(2):
        _copy(world, seed)
        world.steps += 1
        world.check()
    owner = world.bob if target.startswith("bob") else world.alice
    ref = refs.log_ref(owner.id, "team")
    chain = world.remote_entries(ref)
    reviews = [i for i, e in enumerate(chain) if e.body["record"]["type"] == "review"]
    assert len(reviews) == 2, f"{target}: {len(reviews)} reviews in {ref}"
    _rewrap(world, ref, reviews[1] if target == "alice-replayed-copy" else reviews[0])
    world.steps += 1
    world.check()
    _copy(world, seed)
    world.steps += 1
    world.check()
    for eq_seed in (seed, seed + 1):
        EXTRA["equivocation with a stolen key"](world, random.Random(eq_seed))
        world.steps += 1
        world.check()
    for reader in world.readers:
        reader.run("sync")
    world.check()


def _own_decision(world: Any, seed: int) -> None:
    """bob signs a review with his own person key for his own machine and appends it (the same seed: the same
    gesture, byte for byte), then syncs."""
    bob = world.bob
    lesson = f"{random.Random(seed).randrange(16**8):08x}" * 8
    review = {"type": "review", "about": lesson, "approver": "bob", "approved": True, "note": ""}
    bob.append(gesture.sign(bob.signer, bob.team_id, bob.id, review))
    bob.run("sync")


@pytest.mark.slow
def test_replays_inside_a_quarantine_are_what_a_rebuild_reads() -> None:
    """bob's machine appends his own decision three times (the second and third are replays), then the stolen
    copy of his key writes another seq 1 (an equivocation: bob's team log is quarantined from seq 1), then bob
    decides again. A rebuild holds one side of the fork; the incremental index held bob's side and reported its
    copies as replays. Copies inside a quarantine count nowhere and are no replays, so both agree, on every
    reader, after every step (found by restoring the rebuild world in place: the same keys, the same gestures)."""
    world = rebuild.World.restored(rebuild._root())
    bob, twin = world.bob, world.twin
    for _ in range(3):
        _own_decision(world, 0)
        world.check()
    twin.append(note("the twin's seq 1", world.alice.id))
    ref = refs.log_ref(bob.id, "team")
    twin.git("push", "--quiet", "--force", "origin", ref)
    for reader in world.readers:
        reader.run("sync")
    world.check()
    _own_decision(world, 7)
    for reader in world.readers:
        reader.run("sync")
    world.check()
    with rebuild._home(bob):
        from gitive.index import db
        from gitive.index.problems import Report, record_problem
        from gitive.team.hive import open_hive

        hive = open_hive(bob.clone)
        with db.connect(hive.index_path) as conn:
            start = conn.execute("SELECT quarantined_from FROM logs WHERE author = ? AND log = 'team'",
                                 (bob.id,)).fetchone()[0]
            assert start == 1, "the twin's entry did not equivocate with bob's seq 1"
            held = conn.execute("SELECT seq, commit_id FROM entries WHERE author = ? AND log = 'team' AND seq > 1",
                                (bob.id,)).fetchall()
            assert held, "the incremental index holds bob's side of the fork past seq 1"
            # what an index from before step 0013 held: those copies as replays of the first
            for seq, commit in held:
                record_problem(conn, Report(), "replay", ref, commit, bob.id, "team", seq, "an old replay")
            conn.execute("DELETE FROM migrations WHERE name = '0013-quarantined-decisions'")
        with db.connect(hive.index_path) as conn:  # step 0013 runs now
            assert not conn.execute("SELECT 1 FROM problems WHERE kind = 'replay' AND author = ?",
                                    (bob.id,)).fetchall()
    world.check()
