"""Fixtures for CLI tests: simulated machines (a clone and a ``GITIVE_HOME`` each) around real remotes.

The machines and the remote live at this test process's fixed place (``testing.teams``), so the teams a test
only starts from (``alice`` alone, ``pair``, ``trio``) are founded once per test process and restored for each
test, with the paths and ids a new founding would have. Tests of founding itself still found their own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from testing import fixtures, teams
from testing.machines import Fleet, Machine

PEOPLE = (("alice", "laptop"), ("bob", "desk"), ("carol", "box"))


@pytest.fixture
def fleet(place: teams.Place) -> Fleet:
    """Make machines with ``fleet.machine(name, remote)``; found, invite and join through the CLI."""
    return Fleet(place.live / teams.FLEET)


@pytest.fixture
def bare_remote(place: teams.Place) -> Path:
    """An empty ``git init --bare`` repository (a remote reached by file path), at the fixed place."""
    return place.remote()


def _team(size: int):
    def build(live: Path) -> None:
        fleet, remote = Fleet(live / teams.FLEET), fixtures.init_bare(live / teams.REMOTE)
        if size == 1:
            fleet.found(fleet.machine("laptop", remote), "alice")
        else:
            fleet.team(remote, *PEOPLE[:size])

    return build


def _restored(place: teams.Place, fleet: Fleet, size: int) -> list[Machine]:
    place.restore(f"cli-{size}", _team(size))
    return [fleet.known(name) for _, name in PEOPLE[:size]]


@pytest.fixture
def alice(place: teams.Place, fleet: Fleet, bare_remote: Path) -> Machine:
    """Machine ``laptop``: alice founded the team in her clone of ``bare_remote`` and synced."""
    return _restored(place, fleet, 1)[0]


@pytest.fixture
def pair(place: teams.Place, fleet: Fleet, bare_remote: Path) -> list[Machine]:
    """alice (``laptop``, founder) and bob (``desk``), invited and joined; both synced."""
    return _restored(place, fleet, 2)


@pytest.fixture
def trio(place: teams.Place, fleet: Fleet, bare_remote: Path) -> list[Machine]:
    """alice (``laptop``, founder), bob (``desk``) and carol (``box``); all synced."""
    return _restored(place, fleet, 3)
