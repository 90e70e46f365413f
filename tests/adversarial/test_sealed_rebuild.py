"""Incremental = rebuild with sealed scopes (docs/scopes.md, "Reading"), on real git, on every machine.

The moves of ``testing.rebuild`` plus sealed ones: alice's second machine joins (and is later removed), alice,
her second machine and bob write personal and sealed project lessons and review them, and bob copies a sealed
entry of alice's into his own log. What each machine opens depends only on its own key and the entries it
holds: the index kept step by step opens exactly what a rebuild on that machine opens, bodies included.
"""

from __future__ import annotations

import random
from typing import Any

from gitive.store import logs
from testing import rebuild
from testing.machines import Fleet, Machine

# The sealed moves, beside the honest and hostile ones that touch the same logs (sampling is uniform over moves).
EXTRA: dict[str, Any] = {name: rebuild.MOVES[name] for name in (
    "sync", "propose a lesson", "forge on top of a member's ref", "re-wrap a member's entry",
    "equivocation with a stolen key", "rollback by force-push")}


def _studio(world: Any) -> Machine | None:
    return getattr(world, "studio", None)


@rebuild.move(EXTRA, "alice's second machine joins")
def second_machine(world: Any, rng: random.Random) -> None:
    if _studio(world) is not None:
        return
    fleet = Fleet(world.base / "fleet")
    code = fleet.invite(world.alice, "--person", "alice")
    studio = fleet.join(fleet.machine("studio", world.remote), code, "alice", same_person_as=world.alice)
    studio.git("pull", "--quiet", "--ff-only", "origin", "main")
    world.studio = studio
    world.readers.append(studio)
    if rng.random() < 0.7:
        world.alice.run("sync")  # re-seals alice's personal scope for it


def _writer(world: Any, rng: random.Random) -> Machine:
    return rng.choice([m for m in (world.alice, world.bob, _studio(world)) if m is not None])


@rebuild.move(EXTRA, "propose a sealed lesson")
def propose_sealed(world: Any, rng: random.Random) -> None:
    who = _writer(world, rng)
    scope = rng.choice([("--scope", "personal"), ("--sealed",)])
    who.run("lessons", "propose", "--kind", "Gotcha", "--text", f"Sealed {rng.randrange(10**6)}",
            "-e", "file:api.proto", *scope)
    who.run("sync")


@rebuild.move(EXTRA, "review a sealed lesson")
def review_sealed(world: Any, rng: random.Random) -> None:
    who = _writer(world, rng)
    lessons = who.json("lessons", "list", "--state", "proposed")
    if lessons:
        lesson = rng.choice(lessons)
        edit = ["--text", f"Edited {rng.randrange(10**6)}"] if rng.random() < 0.5 else []
        who.decide("review", "approve", lesson["id"], *edit)  # may not count here: that is refused, not raised
        who.run("sync")


@rebuild.move(EXTRA, "remove alice's second machine")
def remove_second(world: Any, rng: random.Random) -> None:
    studio = _studio(world)
    if studio is not None and rng.random() < 0.5:
        world.alice.decide("team", "remove", "alice/studio")
        world.alice.run("sync")
        studio.run("sync")


@rebuild.move(EXTRA, "copy a sealed entry into another log")
def copy_sealed(world: Any, rng: random.Random) -> None:
    """bob, with his machine key and a shell, re-signs a sealed record of someone else's as his own entry."""
    alice = world.alice
    found = [e for name in ("personal", alice.project_log)
             for e in world.remote_entries(f"refs/hive/logs/{alice.id}/{name}") if e.kind == "sealed"]
    if not found:
        return
    entry = rng.choice(found)
    bob = world.bob
    logs.append(bob.repo, bob.key, bob.team_id, entry.body["log"], entry.body["scope"], dict(entry.body["record"]))
    bob.run("sync")


TestSealedIncrementalEqualsRebuild = rebuild.machine_test(EXTRA, examples=3, steps=8)


def test_a_sealed_history_reads_the_same_incrementally_and_rebuilt(tmp_path: Any) -> None:
    """Every sealed move at least once, in an order that makes keys arrive after what they open, with the
    comparison on every machine after each step."""
    world = rebuild.World.create(tmp_path / "world")
    rng = random.Random(7)
    steps = [propose_sealed, second_machine, propose_sealed, propose_sealed, review_sealed, copy_sealed,
             remove_second, propose_sealed, review_sealed]
    for step in steps:
        step(world, rng)
        world.steps += 1
        world.check()
    studio = _studio(world)
    assert studio is not None
    with rebuild._home(studio):
        from gitive.index.refresh import fresh_index
        from gitive.team.hive import open_hive

        with fresh_index(open_hive(studio.clone)) as (conn, _):
            opened = conn.execute("SELECT COUNT(*) FROM sealed_entries WHERE state = 1").fetchone()[0]
    assert opened > 0  # the second machine did open alice's sealed records: the comparison was not vacuous
