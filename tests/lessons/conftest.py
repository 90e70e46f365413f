"""Fixtures for lesson tests: a team of machines around a bare remote, sharing one project file to cite.

The machines and the remote live at this test process's fixed place (``testing.teams``), so ``trio`` and
``founder`` are founded once per session and restored for each test, with the paths and ids a new founding
would have.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from testing import fixtures, teams
from testing.lessons import restored_trio
from testing.machines import Fleet, Machine, share_file

PROTO = "api.proto"


@pytest.fixture
def fleet(place: teams.Place) -> Fleet:
    return Fleet(place.live / teams.FLEET)


@pytest.fixture
def bare_remote(place: teams.Place) -> Path:
    """An empty ``git init --bare`` repository (a remote reached by file path), at the fixed place."""
    return place.remote()


def _founder(live: Path) -> None:
    fleet = Fleet(live / teams.FLEET)
    remote = fixtures.init_bare(live / teams.REMOTE)
    share_file([fleet.found(fleet.machine("a", remote), "alice")])


@pytest.fixture
def trio(place: teams.Place, fleet: Fleet, bare_remote: Path) -> list[Machine]:
    """Machines A (alice, founder and project owner), B (bob) and C (carol), all synced, with ``api.proto``."""
    return restored_trio(place)


@pytest.fixture
def founder(place: teams.Place, fleet: Fleet, bare_remote: Path) -> Machine:
    """One machine: alice founded the team in her clone and owns the project; ``api.proto`` committed."""
    place.restore("lessons-founder", _founder)
    return fleet.known("a")
