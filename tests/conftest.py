"""Hermetic git for every test, a fresh ``GITIVE_HOME`` per test, and factories for real repositories."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pygit2
import pytest
from hypothesis import HealthCheck, settings

from testing import fixtures, teams

settings.register_profile(
    "gitive",
    derandomize=True,  # same examples every run: failures reproduce, CI is not flaky
    database=None,
    deadline=None,  # git object writes and subprocesses have uneven timing
    max_examples=100,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "gitive"))

_SEARCH_LEVELS = (pygit2.enums.ConfigLevel.GLOBAL, pygit2.enums.ConfigLevel.XDG,
                  pygit2.enums.ConfigLevel.SYSTEM, pygit2.enums.ConfigLevel.PROGRAMDATA)


@pytest.fixture(scope="session", autouse=True)
def hermetic_git(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Fixed identity, no system or user config, empty templates, ``HOME`` in a temp dir (whole session)."""
    base = tmp_path_factory.mktemp("hermetic")
    env, unset = fixtures.hermetic_env(base)
    saved = {k: os.environ.get(k) for k in (*env, *unset)}
    saved_paths = {lvl: pygit2.settings.search_path[lvl] for lvl in _SEARCH_LEVELS}
    os.environ.update(env)
    for name in unset:
        os.environ.pop(name, None)
    fixtures.pin_libgit2_config(base)
    try:
        yield base / "home"
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        for lvl, value in saved_paths.items():
            pygit2.settings.search_path[lvl] = value



@pytest.fixture(autouse=True)
def gitive_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own ``GITIVE_HOME`` (not created yet) and a real clock; none touches ~/.gitive."""
    home = tmp_path / "gitive-home"
    monkeypatch.setenv("GITIVE_HOME", str(home))
    monkeypatch.delenv("GITIVE_NOW_MS", raising=False)
    monkeypatch.delenv("GITIVE_CLOCK_FILE", raising=False)
    # What a hook says must not depend on how loaded the machine is: hook calls get 3 s instead of 150 ms.
    # The tests of the budget itself (tests/capture/test_budget.py) run with the default.
    monkeypatch.setenv("GITIVE_HOOK_BUDGET_MS", "3000")
    return home


@pytest.fixture(scope="session")
def team_place(hermetic_git: Path) -> Iterator[teams.Place]:
    """This test process's fixed place for teams built once and restored per test (``testing.teams``)."""
    root = Path(tempfile.mkdtemp(prefix="gvl-", dir="/tmp"))  # short: sockets under it stay within 108 bytes
    try:
        yield teams.Place(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def place(team_place: teams.Place) -> teams.Place:
    """The fixed place, emptied for this test; a team fixture then restores its team into ``place.live``."""
    team_place.fresh()
    return team_place


@pytest.fixture
def machine_home(tmp_path: Path) -> Callable[[str], Path]:
    """Factory: ``machine_home("laptop")`` is a separate ``GITIVE_HOME`` for a simulated machine.

    Switch machines with ``monkeypatch.setenv("GITIVE_HOME", str(machine_home("laptop")))``.
    """

    def make(name: str) -> Path:
        path = tmp_path / "machines" / name
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        return path

    return make


@pytest.fixture
def bare_remote(tmp_path: Path) -> Path:
    """An empty ``git init --bare`` repository (a remote reached by file path)."""
    return fixtures.init_bare(tmp_path / "remote.git")


@pytest.fixture
def make_bare(tmp_path: Path) -> Callable[[str], Path]:
    """Factory for more empty bare repositories: ``make_bare("team.git")``."""
    return lambda name: fixtures.init_bare(tmp_path / "bare" / name)


@pytest.fixture
def make_clone(tmp_path: Path) -> Callable[[str | Path, str], Path]:
    """Factory: ``make_clone(remote, "alice")`` clones into a temp dir (pushing a first commit if empty)."""
    return lambda remote, name: fixtures.clone(remote, tmp_path / "clones" / name)


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    """A non-bare repository with one commit on ``main``."""
    return fixtures.init_repo(tmp_path / "repo")


@pytest.fixture
def bare_repo(tmp_path: Path) -> pygit2.Repository:
    """An empty bare repository opened with pygit2 (for store tests that need no work tree)."""
    return pygit2.Repository(str(fixtures.init_bare(tmp_path / "store.git")))


@pytest.fixture
def git_daemon(tmp_path: Path) -> Iterator[fixtures.GitDaemon]:
    """A real ``git daemon`` on 127.0.0.1 serving ``tmp_path/daemon``; ``git_daemon("x.git")`` is a URL.

    Calling it creates the bare repository on first use; ``git_daemon.base`` is the served directory.
    The daemon is stopped (with its per-connection children) at teardown.
    """
    with fixtures.git_daemon(tmp_path / "daemon") as daemon:
        yield daemon


@pytest.fixture
def run_git() -> Callable[..., str]:
    """``run_git(args, cwd)``: run git with the hermetic environment and return stdout."""
    return fixtures.run_git


_SLOW_LIST = Path(__file__).with_name("slow.txt")
_HEAVY_LIST = Path(__file__).with_name("heavy.txt")


def _listed(path: Path) -> list[str]:
    lines = path.read_text().splitlines() if path.exists() else []
    return [ln.strip() for ln in lines if ln.strip() and not ln.startswith("#")]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark ``slow`` what ``tests/slow.txt`` (measured by ``testing.slowest``) lists: a folder (ending in
    ``/``), a file or a test function. ``make test-fast`` deselects them; ``make test`` runs everything."""
    listed = set(_listed(_SLOW_LIST))
    folders = tuple(ln for ln in listed if ln.endswith("/"))
    for item in items:
        function = item.nodeid.split("[", 1)[0]
        path = function.split("::", 1)[0]
        if function in listed or path in listed or path.startswith(folders):
            item.add_marker(pytest.mark.slow)


class _HeaviestFirst:
    @pytest.hookimpl(trylast=True)  # after pytest groups by fixtures and ``-m`` deselects
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        """Move the files and folders ``tests/heavy.txt`` lists to the front, heaviest first, each one's tests
        together and in their order: with ``--dist worksteal`` (``make test``) one worker starts with the long
        tests and the other takes short ones from the end of its queue, so the two finish together, and a
        folder's session fixtures (the UI's team, the MCP team, the harness slot) are built by one worker only.
        Every process sorts the same collection the same way, as pytest-xdist requires."""
        listed = _listed(_HEAVY_LIST)
        last = len(listed)

        def rank(item: pytest.Item) -> int:
            path = item.nodeid.split("::", 1)[0]
            return next((i for i, entry in enumerate(listed) if path == entry
                         or (entry.endswith("/") and path.startswith(entry))), last)

        items.sort(key=rank)  # stable: the rest keep their order


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_HeaviestFirst(), "gitive-heaviest-first")
