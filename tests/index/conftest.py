"""Fixtures for index tests: simulated machines (a clone and a ``GITIVE_HOME`` each) around real remotes."""

from __future__ import annotations

from pathlib import Path

import pytest

from testing.machines import Fleet, Machine


@pytest.fixture
def fleet(tmp_path: Path) -> Fleet:
    """Make machines with ``fleet.machine(name, remote)``; found, invite and join through the CLI."""
    return Fleet(tmp_path / "fleet")


@pytest.fixture
def pair(fleet: Fleet, bare_remote: Path) -> tuple[Machine, Machine]:
    """alice (founder, machine ``laptop``) and bob (``desk``) in one team, both synced."""
    alice, bob = fleet.team(bare_remote, ("alice", "laptop"), ("bob", "desk"))
    return alice, bob
