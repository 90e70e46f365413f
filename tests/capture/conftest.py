"""A team repository with reviewed and unreviewed lessons, built once per test session with the real library.

``gitive init``, ``propose``, ``review`` and ``fresh_index`` run in the repository's own ``GITIVE_HOME``; hooks
only read its index, and every test runs them with its own ``GITIVE_HOME`` (events and session state), so
tests do not see each other's sessions.
"""

from __future__ import annotations

import contextlib
import io
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing import fixtures, people

from .support import (
    MIGRATE_TEXT,
    SETTINGS_TEXT,
    UNREVIEWED_CACHE_TEXT,
    UNREVIEWED_ERROR_TEXT,
    UNREVIEWED_SETTINGS_TEXT,
    Lesson,
    TeamRepo,
)

HOUR_MS = 3_600_000


@pytest.fixture(scope="session")
def team_repo(tmp_path_factory: pytest.TempPathFactory, hermetic_git: Path) -> TeamRepo:
    """A clone of a bare remote where alice founded the team, proposed five lessons and approved two."""
    base = tmp_path_factory.mktemp("team")
    remote = fixtures.init_bare(base / "remote.git")
    clone = fixtures.clone(remote, base / "clone")
    for name in ("src/app/settings.py", "src/app/cache.py", "src/db/migrate.py", "src/app/views.py"):
        fixtures.commit_file(clone, name, f"# {name}\n")
    now = time.time_ns() // 1_000_000
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GITIVE_HOME", str(base / "alice-home"))
        mp.chdir(clone)
        from gitive.index.refresh import fresh_index
        from gitive.lessons.propose import propose
        from gitive.lessons.review import review
        from gitive.team.hive import open_hive

        with contextlib.redirect_stdout(io.StringIO()):
            assert people.run_deciding(["init", "--person", "alice"]) == 0
        hive = open_hive(clone)
        made: dict[str, Lesson] = {}
        plan = [("settings", SETTINGS_TEXT, "src/app/settings.py", True, 5),
                ("migrate", MIGRATE_TEXT, "src/db/migrate.py", True, 4),
                ("unreviewed_cache", UNREVIEWED_CACHE_TEXT, "src/app/cache.py", False, 3),
                ("unreviewed_settings", UNREVIEWED_SETTINGS_TEXT, "src/app/settings.py", False, 2),
                ("unreviewed_error", UNREVIEWED_ERROR_TEXT, "src/app/views.py", False, 1)]
        with fresh_index(hive) as (conn, _):
            for key, text, path, approve, hours_ago in plan:
                mp.setenv("GITIVE_NOW_MS", str(now - hours_ago * HOUR_MS))
                proposed = propose(hive, conn, kind="Gotcha", text=text, evidence=[f"file:{path}"])
                if approve:
                    mp.setenv("GITIVE_NOW_MS", str(now - hours_ago * HOUR_MS + 60_000))
                    review(hive, conn, proposed.id, approved=True, note="", signer=people.person_key())
                made[key] = Lesson(proposed.id, text, (path,))
        mp.delenv("GITIVE_NOW_MS")
        with fresh_index(hive) as (conn, _):  # current index, and the project id where hooks read it
            states = dict(conn.execute("SELECT lesson, state FROM lesson_status").fetchall())
    assert [states[made[k].id] for k in ("settings", "migrate")] == ["verified", "verified"]
    assert {states[made[k].id] for k in ("unreviewed_cache", "unreviewed_settings", "unreviewed_error")} == {
        "proposed"}
    assert (clone / ".git" / "gitive" / "project-id").is_file()
    return TeamRepo(clone, **made)


@pytest.fixture
def short_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A ``GITIVE_HOME`` with a short path, so ``daemon.sock`` fits in AF_UNIX's 108 bytes."""
    home = Path(tempfile.mkdtemp(prefix="gh-", dir="/tmp"))
    monkeypatch.setenv("GITIVE_HOME", str(home))
    try:
        yield home
    finally:
        shutil.rmtree(home, ignore_errors=True)
