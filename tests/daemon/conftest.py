"""Fixtures for daemon tests: a team of simulated machines (a clone and a short ``GITIVE_HOME`` each) around a
bare remote, every one joined and synced, with a shared ``src/app.py`` to edit.

Founding a team and joining it through the CLI takes seconds, so each team is built once per test process
(through the real CLI) and restored in place for each test (``testing.teams``), with the paths, project id
and signed records a new founding there would have.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from testing import fixtures, teams
from testing.machines import Fleet, Machine

APP = "src/app.py"


def _builder(people: tuple[str, ...]) -> Callable[[Path], None]:
    """Build the team of ``people`` (machine names their initials) under a place's ``live``."""

    def build(base: Path) -> None:
        machines = Fleet(base).team(fixtures.init_bare(base / teams.REMOTE), *[(p, p[0]) for p in people])
        first, *rest = machines
        fixtures.commit_file(first.clone, APP, "print('app')\n", "add the app")
        first.git("push", "--quiet", "origin", "main")
        for m in rest:
            m.git("pull", "--quiet", "--ff-only", "origin", "main")

    return build


@pytest.fixture
def short_fleet(place: teams.Place) -> Fleet:
    """Machines under this test process's fixed place (short: ``<home>/daemon.sock`` fits AF_UNIX's 108 bytes)."""
    return Fleet(place.live)


@pytest.fixture
def remote(place: teams.Place) -> Path:
    return place.live / teams.REMOTE


@pytest.fixture
def make_team(place: teams.Place, short_fleet: Fleet) -> Callable[..., list[Machine]]:
    """``make_team("alice", "bob")``: machines a, b, … of those people, all synced, ``src/app.py`` on each."""

    def make(*people: str) -> list[Machine]:
        place.restore("daemon-" + "-".join(people), _builder(people))
        return [short_fleet.known(p[0]) for p in people]

    return make


@pytest.fixture
def pair(make_team: Callable[..., list[Machine]]) -> list[Machine]:
    """Machines a (alice, founder) and b (bob)."""
    return make_team("alice", "bob")


@pytest.fixture
def trio(make_team: Callable[..., list[Machine]]) -> list[Machine]:
    """Machines a (alice, founder), b (bob) and c (carol)."""
    return make_team("alice", "bob", "carol")
