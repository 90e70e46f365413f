"""Fixtures for lesson tests: a team of machines around a bare remote, sharing one project file to cite."""

from __future__ import annotations

from pathlib import Path

import pytest

from testing import fixtures
from testing.machines import Fleet, Machine

PROTO = "api.proto"


@pytest.fixture
def fleet(tmp_path: Path) -> Fleet:
    return Fleet(tmp_path / "fleet")


def share_file(machines: list[Machine], name: str = PROTO, content: str = "syntax = \"proto3\";\n",
               message: str = "add the api schema") -> str:
    """Commit ``name`` on the first machine, push ``main``, and pull it on the others; return the commit."""
    first, *rest = machines
    commit = fixtures.commit_file(first.clone, name, content, message)
    first.git("push", "--quiet", "origin", "main")
    for m in rest:
        m.git("pull", "--quiet", "--ff-only", "origin", "main")
    return commit


@pytest.fixture
def trio(fleet: Fleet, bare_remote: Path) -> list[Machine]:
    """Machines A (alice, founder and project owner), B (bob) and C (carol), all synced, with ``api.proto``."""
    machines = fleet.team(bare_remote, ("alice", "a"), ("bob", "b"), ("carol", "c"))
    share_file(machines)
    return machines


@pytest.fixture
def founder(fleet: Fleet, bare_remote: Path) -> Machine:
    """One machine: alice founded the team in her clone and owns the project; ``api.proto`` committed."""
    alice = fleet.found(fleet.machine("a", bare_remote), "alice")
    share_file([alice])
    return alice
