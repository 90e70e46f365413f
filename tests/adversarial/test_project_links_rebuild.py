"""Incremental = rebuild with project links in play (testing/rebuild.py): alice (an admin) links project ids,
some dated ahead; bob's agent and alice's own agent copy her links into their logs, dated anywhere; bob writes
links of his own with his (a member's) gesture. After every step each reader's incremental index equals a
rebuild (the harness's check), and the links resolve the same in both (checked after each link move)."""

from __future__ import annotations

import json
import os
import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from gitive.core.clock import now_ms
from gitive.index import db, ingest, project_links
from gitive.index.catchup import catch_up
from gitive.team.hive import open_hive
from testing import rebuild
from testing.machines import Machine, _environ
from tests.adversarial.test_project_move import HOUR, _ids, _link

EXTRA = dict(rebuild.MOVES)
POOL = _ids("r0", "r1", "r2", "r3")


@rebuild.move(EXTRA, "an admin links two projects")
def admin_links(world: rebuild.World, rng: random.Random) -> None:
    old, new = rng.sample(POOL, 2)
    _link(world.alice, old, new, ahead=rng.choice([0, 0, 2 * HOUR]))
    world.alice.run("sync")
    _same_when_rebuilt(world)


@rebuild.move(EXTRA, "a member links two projects")
def member_links(world: rebuild.World, rng: random.Random) -> None:
    old, new = rng.sample(POOL, 2)
    _link(world.bob, old, new)
    world.bob.run("sync")
    _same_when_rebuilt(world)


@rebuild.move(EXTRA, "an agent copies a link")
def agent_copies(world: rebuild.World, rng: random.Random) -> None:
    found = _links_in(world.alice)
    if not found:
        return
    who = rng.choice([world.alice, world.bob])
    who.append(rng.choice(found), "roster", at=now_ms() + rng.choice([0, -24 * HOUR, 23 * HOUR]))
    who.run("sync")
    rng.choice(world.readers).run("sync")
    _same_when_rebuilt(world)


def _links_in(machine: Machine) -> list[dict[str, Any]]:
    with _environ({"GITIVE_HOME": str(machine.home)}):
        path = open_hive(machine.clone).index_path
    with sqlite3.connect(path) as conn:
        rows = conn.execute("SELECT envelope FROM entries WHERE kind = 'project-link'").fetchall()
    return [json.loads(r[0])["body"]["record"] for r in rows]


def _same_when_rebuilt(world: rebuild.World) -> None:
    """Every reader resolves every id of the pool the same in its caught-up index and in a rebuild."""
    for reader in world.readers:
        with _environ({"GITIVE_HOME": str(reader.home)}):
            hive = open_hive(reader.clone)
            with db.connect(hive.index_path) as conn:
                catch_up(hive, conn)
                mine = [project_links.resolve(conn, hive.team_id, p) for p in POOL]
            path = world.base / f"links-{reader.name}.sqlite"
            for suffix in ("", "-wal", "-shm"):
                path.with_name(path.name + suffix).unlink(missing_ok=True)
            with db.connect(path) as conn:
                ingest.ingest(conn, hive.stores(), hive.team_id, hive.founder, hive.me, key=hive.machine_key)
                assert [project_links.resolve(conn, hive.team_id, p) for p in POOL] == mine, reader.name


LINK_MOVES = ("an admin links two projects", "a member links two projects", "an agent copies a link")


@pytest.mark.parametrize("seed", range(2))
def test_links_amid_attacks_keep_incremental_equal_to_rebuild(tmp_path: Path, seed: int) -> None:
    """Seeded rather than drawn by hypothesis, so every run has links in play: half the steps are link moves,
    the others any move of the harness (forgeries, replays, junk, rollbacks, equivocations by a twin)."""
    rng = random.Random(f"links-rebuild/{seed}")
    saved = os.environ.get("GITIVE_HOME")
    try:
        world = rebuild.World.create(tmp_path / "world")
        others = sorted(set(EXTRA) - set(LINK_MOVES))
        for step in range(8):
            name = LINK_MOVES[step % 3] if step % 2 == 0 else rng.choice(others)
            EXTRA[name](world, random.Random(rng.randrange(2**32)))
            world.steps += 1
            world.check()
        _same_when_rebuilt(world)
    finally:
        if saved is not None:
            os.environ["GITIVE_HOME"] = saved
