"""Fixtures for daemon tests: a team of simulated machines (a clone and a short ``GITIVE_HOME`` each) around a
bare remote, every one joined and synced, with a shared ``src/app.py`` to edit.

Founding a team and joining it through the CLI takes about two seconds, so each team is built once per test
session (through the real CLI) and every test gets a fresh copy of it (``testing.live.copy_team``).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from testing import fixtures, live
from testing.machines import Fleet, Machine

APP = "src/app.py"


@pytest.fixture(scope="session")
def team_templates(hermetic_git: Path) -> Iterator[Callable[[tuple[str, ...]], Path]]:
    """``build(("alice", "bob"))``: the base directory of a team of those people, built once per session."""
    built: dict[tuple[str, ...], Path] = {}
    root = Path(tempfile.mkdtemp(prefix="gvt-", dir="/tmp"))

    def build(people: tuple[str, ...]) -> Path:
        if people not in built:
            base = root / str(len(built))
            fleet = Fleet(base)
            remote = fixtures.init_bare(base / live.REMOTE)
            with pytest.MonkeyPatch.context() as mp:
                mp.setenv("GITIVE_HOME", str(base / "unused-home"))
                machines = fleet.team(remote, *[(p, p[0]) for p in people])
            first, *rest = machines
            fixtures.commit_file(first.clone, APP, "print('app')\n", "add the app")
            first.git("push", "--quiet", "origin", "main")
            for m in rest:
                m.git("pull", "--quiet", "--ff-only", "origin", "main")
            built[people] = base
        return built[people]

    try:
        yield build
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def short_fleet() -> Iterator[Fleet]:
    with live.short_fleet() as fleet:
        yield fleet


@pytest.fixture
def remote(short_fleet: Fleet) -> Path:
    return short_fleet.base / live.REMOTE


@pytest.fixture
def make_team(short_fleet: Fleet, team_templates: Callable[[tuple[str, ...]], Path]
              ) -> Callable[..., list[Machine]]:
    """``make_team("alice", "bob")``: machines a, b, … of those people, all synced, ``src/app.py`` on each."""

    def make(*people: str) -> list[Machine]:
        return live.copy_team(team_templates(tuple(people)), short_fleet.base, [p[0] for p in people])

    return make


@pytest.fixture
def pair(make_team: Callable[..., list[Machine]]) -> list[Machine]:
    """Machines a (alice, founder) and b (bob)."""
    return make_team("alice", "bob")


@pytest.fixture
def trio(make_team: Callable[..., list[Machine]]) -> list[Machine]:
    """Machines a (alice, founder), b (bob) and c (carol)."""
    return make_team("alice", "bob", "carol")
