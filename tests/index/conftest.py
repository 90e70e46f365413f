"""Fixtures for index tests: simulated machines (a clone and a ``GITIVE_HOME`` each) around real remotes.

The machines and the remote live at this test process's fixed place (``testing.teams``), so ``pair`` is
founded once per session and restored for each test, with the paths and ids a new founding would have.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from testing import fixtures, teams
from testing.machines import Fleet, Machine


@pytest.fixture
def fleet(place: teams.Place) -> Fleet:
    """Make machines with ``fleet.machine(name, remote)``; found, invite and join through the CLI."""
    return Fleet(place.live / teams.FLEET)


@pytest.fixture
def bare_remote(place: teams.Place) -> Path:
    """An empty ``git init --bare`` repository (a remote reached by file path), at the fixed place."""
    return place.remote()


def _pair(live: Path) -> None:
    Fleet(live / teams.FLEET).team(fixtures.init_bare(live / teams.REMOTE), ("alice", "laptop"),
                                   ("bob", "desk"))


@pytest.fixture
def pair(place: teams.Place, fleet: Fleet, bare_remote: Path) -> tuple[Machine, Machine]:
    """alice (founder, machine ``laptop``) and bob (``desk``) in one team, both synced."""
    place.restore("index-pair", _pair)
    return fleet.known("laptop"), fleet.known("desk")
