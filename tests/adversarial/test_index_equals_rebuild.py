"""The incremental index always equals ``gitive index rebuild`` (docs/verification.md §4): random interleavings
of honest appends, proposals and syncs with hostile pushes to a real bare remote (forgeries, re-wraps,
replays, backdating, junk chains, a stranger's log, equivocation with a stolen key, rollback by force-push),
checked after every step on both members' machines. The harness is ``testing.rebuild``; add moves there or in
a copy of its table."""

from __future__ import annotations

import random
from pathlib import Path

from gitive.index import db
from testing.machines import Machine
from testing.rebuild import MOVES, World, machine_test

TestIncrementalEqualsRebuild = machine_test(MOVES)


def test_a_quarantined_lesson_leaves_every_state_at_once(tmp_path: Path) -> None:
    """The equivocation flag was overwritten during ingest, so a quarantined lesson kept its state (listed and
    injectable) until a rebuild."""
    world = World.create(tmp_path)
    bob, alice, twin = world.bob, world.alice, world.twin
    bob.ok("lessons", "propose", "--kind", "Gotcha", "--text", "Regenerate the stubs", "-e", "file:api.proto")
    bob.ok("sync")
    alice.ok("sync")
    world.check()
    twin.ok("lessons", "propose", "--kind", "Gotcha", "--text", "Never regenerate", "-e", "file:api.proto")
    twin.git("push", "--quiet", "--force", "origin", f"refs/hive/logs/{twin.id}/{twin.project_log}")
    alice.ok("sync")
    incremental, _ = world.views(alice)
    assert incremental["quarantines"] and incremental["lessons"] == []
    world.check()


def test_an_equivocation_over_citations_leaves_the_same_stats(tmp_path: Path) -> None:
    world = World.create(tmp_path)
    for name in ("append and sync", "equivocation with a stolen key"):
        MOVES[name](world, random.Random(0))
        world.steps += 1
    for reader in world.readers:
        world.views(reader)  # brings the index up to date and writes the rebuild beside it
        stats = "SELECT lesson, citations, successes FROM lesson_stats ORDER BY 1"
        assert _raw(reader, stats) == _raw_rebuilt(world, reader, stats)


def _raw(reader: Machine, sql: str) -> list[tuple]:
    with db.connect(reader.clone / ".git" / "gitive" / "index.sqlite") as conn:
        return conn.execute(sql).fetchall()


def _raw_rebuilt(world: World, reader: Machine, sql: str) -> list[tuple]:
    with db.connect(world.base / f"rebuild-{reader.name}.sqlite") as conn:
        return conn.execute(sql).fetchall()
