"""Opening repositories and their config."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitive.errors import NotARepository
from gitive.store import repo as repo_mod
from testing.fixtures import run_git


def test_open_repo_finds_the_repository_from_a_subdirectory(git_repo: Path) -> None:
    sub = git_repo / "a" / "b"
    sub.mkdir(parents=True)
    opened = repo_mod.open_repo(sub)
    assert Path(opened.workdir).resolve() == git_repo.resolve()
    assert repo_mod.git_dir(opened).resolve() == (git_repo / ".git").resolve()
    assert repo_mod.workdir(opened).resolve() == git_repo.resolve()


def test_open_repo_uses_the_current_directory(git_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(git_repo)
    assert Path(repo_mod.open_repo().workdir).resolve() == git_repo.resolve()


def test_open_repo_outside_a_repository_says_what_to_do(tmp_path: Path) -> None:
    outside = tmp_path / "plain"
    outside.mkdir()
    with pytest.raises(NotARepository, match="not inside a git repository"):
        repo_mod.open_repo(outside)


def test_workdir_of_a_bare_repository_is_its_git_dir(bare_remote: Path) -> None:
    opened = repo_mod.open_repo(bare_remote)
    assert repo_mod.workdir(opened).resolve() == bare_remote.resolve()


def test_config_get_set_and_multivalued_add(git_repo: Path) -> None:
    opened = repo_mod.open_repo(git_repo)
    assert repo_mod.config_get(opened, "hive.team") is None
    repo_mod.config_set(opened, "hive.team", "7e" * 16)
    assert repo_mod.config_get(opened, "hive.team") == "7e" * 16
    assert repo_mod.config_all(opened, "remote.origin.fetch") == []
    for _ in range(2):
        repo_mod.config_add(opened, "remote.origin.fetch", "+refs/hive/*:refs/hive-remotes/origin/*")
    repo_mod.config_add(opened, "remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*")
    assert run_git(["config", "--get-all", "remote.origin.fetch"], cwd=git_repo).splitlines() == [
        "+refs/hive/*:refs/hive-remotes/origin/*", "+refs/heads/*:refs/remotes/origin/*"]


def test_remotes_and_urls(bare_remote: Path, make_clone) -> None:
    clone = make_clone(bare_remote, "alice")
    opened = repo_mod.open_repo(clone)
    assert repo_mod.remotes(opened) == ["origin"]
    assert repo_mod.remote_url(opened, "origin") == str(bare_remote)
    assert repo_mod.remote_url(opened, "nope") is None


def test_open_at_opens_a_git_dir_and_refuses_a_plain_directory(git_repo: Path, tmp_path: Path) -> None:
    assert repo_mod.git_dir(repo_mod.open_at(git_repo / ".git")).resolve() == (git_repo / ".git").resolve()
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(NotARepository, match="is not a git repository"):
        repo_mod.open_at(plain)
    with pytest.raises(NotARepository):
        repo_mod.open_at(tmp_path / "missing")


def test_init_bare_makes_an_empty_bare_repository_and_reopens_one(tmp_path: Path) -> None:
    made = repo_mod.init_bare(tmp_path / "store.git")
    repo_mod.config_set(made, "hive.team", "ab" * 16)
    again = repo_mod.init_bare(tmp_path / "store.git")  # what is there is kept
    assert repo_mod.config_get(again, "hive.team") == "ab" * 16
    assert run_git(["rev-parse", "--is-bare-repository"], cwd=tmp_path / "store.git").strip() == "true"


def test_head_names_the_branch_or_head_when_detached_and_nothing_without_a_repository(git_repo: Path,
                                                                                       tmp_path: Path) -> None:
    commit = run_git(["rev-parse", "HEAD"], cwd=git_repo).strip()
    assert repo_mod.head(git_repo) == ("main", commit)
    run_git(["checkout", "--quiet", "--detach"], cwd=git_repo)
    assert repo_mod.head(git_repo) == ("HEAD", commit)
    assert repo_mod.head(tmp_path / "missing") == (None, None)
    unborn = tmp_path / "unborn"
    run_git(["init", "--quiet", str(unborn)])
    assert repo_mod.head(unborn) == (None, None)


def test_remote_add_and_unset_matching_values(git_repo: Path, bare_remote: Path) -> None:
    opened = repo_mod.open_repo(git_repo)
    repo_mod.remote_add(opened, "team", str(bare_remote))
    assert repo_mod.remote_url(opened, "team") == str(bare_remote)
    repo_mod.config_add(opened, "remote.team.fetch", "+refs/hive/*:refs/hive-remotes/team/*")
    repo_mod.config_unset_matching(opened, "remote.team.fetch", r"^\+refs/hive/")
    assert repo_mod.config_all(opened, "remote.team.fetch") == ["+refs/heads/*:refs/remotes/team/*"]
    repo_mod.config_unset_matching(opened, "remote.team.fetch", r"^\+refs/hive/")  # none left: nothing happens
    repo_mod.config_unset_matching(opened, "remote.none.fetch", ".*")
    repo_mod.config_unset(opened, "hive.absent")
    assert repo_mod.config_all(opened, "remote.team.fetch") == ["+refs/heads/*:refs/remotes/team/*"]
