"""Linked worktrees (real ``git worktree add``): install and uninstall in one never touch the main clone's or
another worktree's files, shared git hooks stay while any work tree installed them, and the project-id cache
is one per repository."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from gitive.capture import locate
from gitive.install import git_hooks, state
from testing.fixtures import run_git
from testing.machines import Machine, run_cli
from tests.install.support import install, snapshot, uninstall


def _worktree(repo: Path, path: Path, branch: str) -> Path:
    run_git(["worktree", "add", "-q", "-b", branch, str(path)], cwd=repo)
    return path


def _commit(repo: Path, name: str) -> subprocess.CompletedProcess:
    (repo / name).write_text(name + "\n")
    run_git(["add", name], cwd=repo)
    return subprocess.run(["git", "commit", "-q", "-m", name], cwd=repo, capture_output=True, text=True,
                          env=dict(os.environ))


def _ours(repo: Path) -> list[str]:
    return [h for h in git_hooks.HOOKS if git_hooks.is_ours(repo / ".git" / "hooks" / h)]


def _outside_git(snap: dict) -> dict:
    return {k: v for k, v in snap.items() if not k.startswith(".git/")}


def test_uninstall_in_a_worktree_keeps_the_main_clones_hooks_and_files(git_repo: Path, tmp_path: Path) -> None:
    install(git_repo, ("claude",))
    main_before = snapshot(git_repo)
    wt = _worktree(git_repo, tmp_path / "wt", "side")
    install(wt, ("claude", "codex"))
    assert (wt / ".claude/settings.json").exists() and (wt / ".codex/hooks.json").exists()
    assert _outside_git(snapshot(git_repo)) == _outside_git(main_before)  # no main-clone file touched
    assert ".codex/hooks.json" in state.load(git_repo / ".git" / "worktrees" / "wt")["files"]
    assert ".codex/hooks.json" not in state.load(git_repo / ".git")["files"]  # each work tree keeps its own record
    report = uninstall(wt)
    assert report.git_hooks["removed"] == [] and report.git_hooks["kept_for"] == [str(git_repo)]
    assert _ours(git_repo) == list(git_hooks.HOOKS)
    assert not (wt / ".claude").exists() and not (wt / ".codex").exists()
    main_after = snapshot(git_repo)
    assert _outside_git(main_after) == _outside_git(main_before)
    assert main_after[".git/gitive/install.json"] == main_before[".git/gitive/install.json"]
    assert _commit(git_repo, "still-hooked.txt").returncode == 0
    # and the last work tree to uninstall takes them out
    uninstall(git_repo)
    assert _ours(git_repo) == [] and not (git_repo / ".claude").exists()


def test_hooks_installed_only_in_a_worktree_are_removed_there(git_repo: Path, tmp_path: Path) -> None:
    before = snapshot(git_repo)
    wt = _worktree(git_repo, tmp_path / "wt", "side")
    report = install(wt, (), hooks=True)
    assert Path(report.git_hooks["dir"]).resolve() == (git_repo / ".git" / "hooks").resolve()
    assert _commit(wt, "in-worktree.txt").returncode == 0
    done = uninstall(wt)
    assert len(done.git_hooks["removed"]) == len(git_hooks.HOOKS) and done.git_hooks["kept_for"] == []
    assert _ours(git_repo) == []
    assert _outside_git(snapshot(git_repo)) == _outside_git(before)


def test_uninstall_in_main_keeps_hooks_a_worktree_installed(git_repo: Path, tmp_path: Path) -> None:
    wt = _worktree(git_repo, tmp_path / "wt", "side")
    install(git_repo, ())
    install(wt, ())
    report = uninstall(git_repo)
    assert report.git_hooks["kept_for"] == [str(wt)] and _ours(git_repo) == list(git_hooks.HOOKS)
    uninstall(wt)
    assert _ours(git_repo) == []


def test_a_deleted_worktree_does_not_keep_hooks_alive(git_repo: Path, tmp_path: Path) -> None:
    wt = _worktree(git_repo, tmp_path / "wt", "side")
    install(wt, ())
    install(git_repo, ())
    subprocess.run(["rm", "-rf", str(wt)], check=True)  # gone without `git worktree remove`
    report = uninstall(git_repo)
    assert report.git_hooks["kept_for"] == [] and _ours(git_repo) == []


def test_the_cli_says_why_hooks_stay(git_repo: Path, tmp_path: Path) -> None:
    wt = _worktree(git_repo, tmp_path / "wt", "side")
    env = {"GITIVE_HOME": str(tmp_path / "home")}
    assert run_cli(["install", "--git-hooks"], git_repo, env).code == 0
    assert run_cli(["install", "--git-hooks"], wt, env).code == 0
    out = run_cli(["uninstall", "--git-hooks"], wt, env)
    assert out.code == 0 and "kept the git hooks" in out.out and str(git_repo) in out.out


def test_the_project_id_cache_is_one_per_repository(tmp_path: Path, bare_remote: Path) -> None:
    from testing import fixtures

    home = tmp_path / "home"
    home.mkdir()
    clone = fixtures.clone(bare_remote, tmp_path / "clone")
    main = Machine("laptop", home, clone)
    main.decided("init", "--person", "alice")
    wt = _worktree(clone, tmp_path / "wt", "side")
    here = Machine("laptop", home, wt)
    view = here.json("team")
    assert view["team_id"] == main.team_id  # a worktree is in its clone's team
    worktree_git_dir = clone / ".git" / "worktrees" / "wt"
    assert not (worktree_git_dir / "gitive").exists()  # nothing of gitive's in the worktree's own git dir
    found = locate.find(wt)
    assert found is not None and locate.project_id(found) == locate.project_id(locate.find(clone))
    assert locate.index_path(found) == clone / ".git" / "gitive" / "index.sqlite"
    # one index: what the main clone proposes, the worktree lists
    (clone / "n.txt").write_text("n\n")
    main.git("add", "n.txt")
    main.git("commit", "-q", "-m", "n")
    lesson = main.ok("lessons", "propose", "--kind", "Gotcha", "--text", "worktrees share one index",
                     "--evidence", "file:n.txt").out.strip()
    assert here.json("lessons", "show", lesson)["text"] == "worktrees share one index"
    assert not (worktree_git_dir / "gitive").exists()
