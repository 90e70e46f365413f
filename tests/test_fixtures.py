"""The test helpers themselves: hermetic git, clones of empty remotes, and a real git daemon."""

from __future__ import annotations

import os
from pathlib import Path

import pygit2

from testing import fixtures
from testing.fixtures import run_git


def test_hermetic_git_uses_the_fixed_identity_and_no_user_config(git_repo: Path) -> None:
    assert "hermetic" in os.environ["HOME"]
    assert os.environ["GIT_CONFIG_NOSYSTEM"] == "1"
    author = run_git(["log", "-1", "--format=%an <%ae>"], cwd=git_repo).strip()
    assert author == f"{fixtures.AUTHOR_NAME} <{fixtures.AUTHOR_EMAIL}>"
    origins = run_git(["config", "--list", "--show-origin"], cwd=git_repo)
    assert "/etc/gitconfig" not in origins
    hooks = git_repo / ".git" / "hooks"
    assert not hooks.exists() or not list(hooks.iterdir())  # empty template dir: no sample hooks


def test_libgit2_reads_the_hermetic_global_config(tmp_path: Path) -> None:
    repo = pygit2.Repository(str(fixtures.init_repo(tmp_path / "r")))
    assert repo.config["user.email"] == fixtures.AUTHOR_EMAIL


def test_gitive_home_is_fresh_per_test(gitive_home: Path) -> None:
    assert os.environ["GITIVE_HOME"] == str(gitive_home)
    assert not gitive_home.exists()
    assert "GITIVE_NOW_MS" not in os.environ


def test_machine_home_gives_separate_dirs(machine_home) -> None:
    a, b = machine_home("a"), machine_home("b")
    assert a != b and a.is_dir() and b.is_dir()
    assert machine_home("a") == a


def test_make_clone_of_empty_remote_pushes_a_first_commit(bare_remote: Path, make_clone) -> None:
    first = make_clone(bare_remote, "alice")
    assert fixtures.ref_tips(bare_remote) == {"refs/heads/main": run_git(["rev-parse", "HEAD"], cwd=first).strip()}
    second = make_clone(bare_remote, "bob")
    assert run_git(["rev-parse", "HEAD"], cwd=second) == run_git(["rev-parse", "HEAD"], cwd=first)


def test_git_daemon_serves_clone_and_push(git_daemon, make_clone) -> None:
    url = git_daemon("team.git")
    assert url.startswith("git://127.0.0.1:") and url.endswith("/team.git")
    alice = make_clone(url, "alice")
    run_git(["push", "--quiet", url, "HEAD:refs/hive/logs/x"], cwd=alice)
    tips = fixtures.ref_tips(git_daemon.base / "team.git")
    assert tips["refs/hive/logs/x"] == tips["refs/heads/main"]
    assert fixtures.has_refs(url)


def test_git_daemon_is_stopped_after_the_context(tmp_path: Path) -> None:
    with fixtures.git_daemon(tmp_path / "d") as daemon:
        proc = daemon.proc
        assert proc.poll() is None
    assert proc.poll() is not None


def test_cpu_load_runs_two_busy_processes_per_core_and_stops_them(monkeypatch) -> None:
    from testing import load

    monkeypatch.setenv("GITIVE_TEST_LOAD", "1")
    with load.cpu_load(per_core=2, seconds=30, settle=0.1) as busy:
        assert busy.count == 2 * load.cores()
        assert busy.alive() == busy.count
        procs = list(busy.procs)
    assert all(p.poll() is not None for p in procs)


def test_cpu_load_bounds_each_process_in_time(monkeypatch) -> None:
    import time

    from testing import load

    monkeypatch.setenv("GITIVE_TEST_LOAD", "1")
    with load.cpu_load(per_core=1, seconds=0.5, settle=0) as busy:
        deadline = time.monotonic() + 10
        while busy.alive() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert busy.alive() == 0  # each stopped by itself at its deadline
