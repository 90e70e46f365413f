"""gitive's git hooks installed into real repositories and driven by real ``git commit``, ``--amend``,
``rebase`` and ``merge``: chaining, ``core.hooksPath``, pre-commit, husky, and never failing git."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from gitive.capture import events, githooks
from gitive.errors import GitiveError
from gitive.install import git_hooks, state
from gitive.install.repo import locate
from testing.fixtures import run_git
from tests.install.support import install, snapshot, uninstall

FOREIGN = "#!/bin/sh\necho \"foreign $*\" >> \"$MARKER\"\nexit {code}\n"


def commit(repo: Path, name: str, message: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    (repo / name).write_text(message + "\n")
    run_git(["add", name], cwd=repo)
    return subprocess.run(["git", "commit", "-q", "-m", message], cwd=repo, capture_output=True, text=True,
                          env={**os.environ, **(env or {})})


def hooks_only(repo: Path, **kwargs: object) -> None:
    install(repo, (), True, **kwargs)  # type: ignore[arg-type]


def vcs(action: str) -> list[dict]:
    return [e["vcs"] for e in events.read(actions=(action,))]


def foreign_hook(path: Path, code: int = 0, text: str | None = None) -> bytes:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text if text is not None else FOREIGN.format(code=code))
    path.chmod(0o750)
    return path.read_bytes()


@pytest.fixture
def marker(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "marker.txt"
    monkeypatch.setenv("MARKER", str(path))
    return path


def test_installed_hooks_record_commit_amend_rebase_and_merge(git_repo: Path) -> None:
    hooks_only(git_repo)
    for hook in git_hooks.HOOKS:
        path = git_repo / ".git/hooks" / hook
        assert git_hooks.is_ours(path) and os.access(path, os.X_OK)
    run_git(["checkout", "-q", "-b", "topic"], cwd=git_repo)
    assert commit(git_repo, "t.txt", "topic").returncode == 0
    first = run_git(["rev-parse", "HEAD"], cwd=git_repo).strip()
    run_git(["commit", "-q", "--amend", "-m", "topic, amended"], cwd=git_repo)
    run_git(["checkout", "-q", "main"], cwd=git_repo)
    commit(git_repo, "m.txt", "main")
    run_git(["checkout", "-q", "topic"], cwd=git_repo)
    run_git(["rebase", "-q", "main"], cwd=git_repo)
    rebased = run_git(["rev-parse", "HEAD"], cwd=git_repo).strip()
    run_git(["checkout", "-q", "main"], cwd=git_repo)
    run_git(["merge", "-q", "--no-ff", "--no-edit", "topic"], cwd=git_repo)
    assert [v["subject"] for v in vcs("vcs.commit")] == ["topic", "topic, amended", "main", "topic, amended"]
    assert [v["kind"] for v in vcs("vcs.rewrite")] == ["amend", "rebase"]
    assert vcs("vcs.merge")[0]["files"] == ["t.txt"]
    assert githooks.resolve_rewritten(git_repo / ".git", first) == rebased


def test_a_foreign_hook_still_runs_and_is_restored_exactly(git_repo: Path, marker: Path) -> None:
    original = foreign_hook(git_repo / ".git/hooks/post-commit")
    before = snapshot(git_repo)
    report = install(git_repo, (), True)
    assert report.git_hooks is not None
    assert report.git_hooks["chained"] == {"post-commit": str(git_repo / ".git/hooks/post-commit.legacy")}
    assert (git_repo / ".git/hooks/post-commit.legacy").read_bytes() == original
    assert commit(git_repo, "a.txt", "with a foreign hook").returncode == 0
    assert marker.read_text() == "foreign \n"
    assert vcs("vcs.commit")[0]["subject"] == "with a foreign hook"
    hooks_only(git_repo)  # idempotent: the kept hook is not moved again
    assert (git_repo / ".git/hooks/post-commit.legacy").read_bytes() == original
    uninstall(git_repo, hooks=True)
    after = snapshot(git_repo)
    for key in [k for k in after if k.startswith(".git/") and not k.startswith(".git/hooks")]:
        after.pop(key)  # the commit changed the index, refs and logs
    assert {k: v for k, v in after.items() if k.startswith(".git/hooks")} == {
        k: v for k, v in before.items() if k.startswith(".git/hooks")}


def test_post_rewrite_input_reaches_the_kept_hook_and_gitive(git_repo: Path, tmp_path: Path) -> None:
    seen = tmp_path / "seen.txt"
    foreign_hook(git_repo / ".git/hooks/post-rewrite", text=f"#!/bin/sh\necho \"$1\" > '{seen}'\ncat >> '{seen}'\n")
    hooks_only(git_repo)
    commit(git_repo, "a.txt", "one")
    old = run_git(["rev-parse", "HEAD"], cwd=git_repo).strip()
    run_git(["commit", "-q", "--amend", "-m", "two"], cwd=git_repo)
    new = run_git(["rev-parse", "HEAD"], cwd=git_repo).strip()
    assert seen.read_text() == f"amend\n{old} {new}\n"
    assert (git_repo / ".git/gitive/rewrites").read_text() == f"{old} {new}\n"


def test_a_failing_kept_hook_never_fails_the_commit(git_repo: Path, marker: Path) -> None:
    foreign_hook(git_repo / ".git/hooks/post-commit", code=1)
    foreign_hook(git_repo / ".git/hooks/post-merge", code=7)
    hooks_only(git_repo)
    result = commit(git_repo, "a.txt", "despite a failing hook")
    assert (result.returncode, result.stderr) == (0, "")
    assert marker.exists()
    assert [v["subject"] for v in vcs("vcs.commit")] == ["despite a failing hook"]


def test_a_missing_interpreter_and_no_gitive_hook_never_fail_the_commit(git_repo: Path, tmp_path: Path) -> None:
    hooks_only(git_repo, python=str(tmp_path / "gone" / "python3"))
    bare_path = _path_with_only("git", "sh", "cat", tmp_path / "bin")
    result = commit(git_repo, "a.txt", "no gitive anywhere", env={"PATH": bare_path})
    assert (result.returncode, result.stderr) == (0, "")
    assert vcs("vcs.commit") == []


def test_a_broken_gitive_hook_on_path_never_fails_the_commit(git_repo: Path, tmp_path: Path) -> None:
    hooks_only(git_repo, python=str(tmp_path / "gone" / "python3"))
    bin_dir = tmp_path / "bin"
    path = _path_with_only("git", "sh", "cat", bin_dir)
    foreign_hook(bin_dir / "gitive-hook", text="#!/bin/sh\necho broken >&2\nexit 1\n")
    result = commit(git_repo, "a.txt", "broken gitive-hook", env={"PATH": path})
    assert (result.returncode, result.stderr) == (0, "")


def test_gitive_hook_on_path_is_the_fallback(git_repo: Path, tmp_path: Path) -> None:
    hooks_only(git_repo, python=str(tmp_path / "gone" / "python3"))
    bin_dir = tmp_path / "bin"
    path = _path_with_only("git", "sh", "cat", bin_dir)
    log = tmp_path / "calls.txt"
    foreign_hook(bin_dir / "gitive-hook", text=f"#!/bin/sh\necho \"$*\" >> '{log}'\n")
    commit(git_repo, "a.txt", "fallback", env={"PATH": path})
    assert log.read_text() == "git post-commit\n"


def _path_with_only(*names: str | Path) -> str:
    """A PATH holding links to just these programs (the last argument is the directory to use)."""
    *programs, folder = names
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for name in programs:
        found = shutil.which(str(name))
        assert found, name
        (folder / str(name)).symlink_to(found)
    return str(folder)


def test_core_hooks_path_outside_the_repository_is_used_and_left_configured(git_repo: Path, tmp_path: Path,
                                                                          marker: Path) -> None:
    custom = tmp_path / "team-hooks"
    original = foreign_hook(custom / "post-commit")
    run_git(["config", "core.hooksPath", str(custom)], cwd=git_repo)
    hooks_only(git_repo)
    assert git_hooks.is_ours(custom / "post-commit")
    assert not (git_repo / ".git/hooks/post-commit").exists()
    commit(git_repo, "a.txt", "custom hooks dir")
    assert marker.exists() and vcs("vcs.commit")
    uninstall(git_repo)
    assert (custom / "post-commit").read_bytes() == original
    assert sorted(p.name for p in custom.iterdir()) == ["post-commit"]
    assert run_git(["config", "core.hooksPath"], cwd=git_repo).strip() == str(custom)


def test_a_relative_hooks_path_inside_the_work_tree_keeps_git_status_clean(git_repo: Path) -> None:
    (git_repo / "githooks").mkdir()
    foreign_hook(git_repo / "githooks" / "pre-commit", text="#!/bin/sh\nexit 0\n")
    run_git(["add", "githooks"], cwd=git_repo)
    run_git(["commit", "-q", "-m", "team hooks"], cwd=git_repo)
    run_git(["config", "core.hooksPath", "githooks"], cwd=git_repo)
    before = snapshot(git_repo)
    hooks_only(git_repo / "githooks")  # from a subdirectory: the relative path is still the top's
    assert git_hooks.is_ours(git_repo / "githooks/post-commit")
    assert run_git(["status", "--porcelain"], cwd=git_repo) == ""
    assert "/githooks/post-commit" in (git_repo / ".git/info/exclude").read_text()
    uninstall(git_repo)
    after = snapshot(git_repo)
    after.pop(".git/index", None)
    before.pop(".git/index", None)  # `git status` refreshed the index's stat data
    assert after == before


def test_a_tracked_hook_in_the_work_tree_is_never_moved(git_repo: Path) -> None:
    foreign_hook(git_repo / ".husky/post-commit", text='#!/usr/bin/env sh\n. "$(dirname -- "$0")/_/husky.sh"\n')
    run_git(["add", ".husky"], cwd=git_repo)
    run_git(["commit", "-q", "-m", "husky 8"], cwd=git_repo)
    run_git(["config", "core.hooksPath", ".husky"], cwd=git_repo)
    before = snapshot(git_repo)
    with pytest.raises(GitiveError, match="tracked in this repository"):
        install(git_repo)
    assert snapshot(git_repo) == before


def test_a_foreign_hook_and_a_different_kept_hook_are_refused(git_repo: Path) -> None:
    foreign_hook(git_repo / ".git/hooks/post-merge")
    foreign_hook(git_repo / ".git/hooks/post-merge.legacy", text="#!/bin/sh\necho other\n")
    before = snapshot(git_repo)
    with pytest.raises(GitiveError, match="both exist"):
        install(git_repo)
    assert snapshot(git_repo) == before


PRE_COMMIT_SCRIPT = """#!/usr/bin/env bash
# File generated by pre-commit: https://pre-commit.com
# ID: 138fd403232d2ddd5efb44317e38bf03
# (a stand-in for pre-commit's hook: it runs <hook>.legacy first, as pre-commit's migration mode does)
HERE="$(cd "$(dirname "$0")" && pwd)"
if [ -n "$PRE_COMMIT_RUNNING_LEGACY" ]; then echo "bug: migration mode" >&2; exit 1; fi
if [ -x "$HERE/post-commit.legacy" ]; then PRE_COMMIT_RUNNING_LEGACY=1 "$HERE/post-commit.legacy" "$@"; fi
echo "pre-commit ran" >> "$MARKER"
"""


def test_next_to_a_pre_commit_hook_ours_takes_the_legacy_place(git_repo: Path, marker: Path) -> None:
    original = foreign_hook(git_repo / ".git/hooks/post-commit", text=PRE_COMMIT_SCRIPT)
    hooks_only(git_repo)
    assert (git_repo / ".git/hooks/post-commit").read_bytes() == original
    assert git_hooks.is_ours(git_repo / ".git/hooks/post-commit.legacy")
    result = commit(git_repo, "a.txt", "with pre-commit")
    assert (result.returncode, result.stderr) == (0, "")
    assert marker.read_text() == "pre-commit ran\n"
    assert [v["subject"] for v in vcs("vcs.commit")] == ["with pre-commit"]
    hooks_only(git_repo)
    assert (git_repo / ".git/hooks/post-commit").read_bytes() == original
    uninstall(git_repo)
    assert (git_repo / ".git/hooks/post-commit").read_bytes() == original
    assert not (git_repo / ".git/hooks/post-commit.legacy").exists()


HUSKY_H = """#!/usr/bin/env sh
n=$(basename "$0")
s=$(dirname "$(dirname "$0")")/$n
[ ! -f "$s" ] && exit 0
sh -e "$s" "$@"
c=$?
[ $c != 0 ] && echo "husky - $n script failed (code $c)"
exit $c
"""
HUSKY_STUB = '#!/usr/bin/env sh\n. "$(dirname "$0")/h"\n'


def test_husky_9_hooks_are_chained_by_their_own_name(git_repo: Path, marker: Path) -> None:
    underscore = git_repo / ".husky/_"
    foreign_hook(underscore / "h", text=HUSKY_H)
    (underscore / ".gitignore").write_text("*\n")
    for hook in ("post-commit", "pre-commit"):
        foreign_hook(underscore / hook, text=HUSKY_STUB)
    foreign_hook(git_repo / ".husky/post-commit", text='echo "husky post-commit" >> "$MARKER"\n')
    run_git(["add", ".husky/post-commit"], cwd=git_repo)
    run_git(["commit", "-q", "--no-verify", "-m", "husky"], cwd=git_repo)
    run_git(["config", "core.hooksPath", ".husky/_"], cwd=git_repo)
    marker.unlink(missing_ok=True)
    before = snapshot(git_repo)
    hooks_only(git_repo)
    assert 'GITIVE_LEGACY=source' in (underscore / "post-commit").read_text()
    assert not (git_repo / ".git/info/exclude").exists()  # husky's folder is ignored already
    result = commit(git_repo, "a.txt", "with husky")
    assert (result.returncode, result.stderr) == (0, "")
    assert marker.read_text() == "husky post-commit\n"
    assert vcs("vcs.commit")[-1]["subject"] == "with husky"
    run_git(["reset", "-q", "--hard", "HEAD~1"], cwd=git_repo)
    uninstall(git_repo)
    after = snapshot(git_repo)
    for snap in (before, after):
        for key in [k for k in snap if k.startswith(".git/") and k != ".git/info/exclude"]:
            snap.pop(key)
    assert after == before


def test_husky_rewriting_its_folder_is_repaired_by_install(git_repo: Path) -> None:
    underscore = git_repo / ".husky/_"
    foreign_hook(underscore / "h", text=HUSKY_H)
    foreign_hook(underscore / "post-commit", text=HUSKY_STUB)
    run_git(["config", "core.hooksPath", ".husky/_"], cwd=git_repo)
    hooks_only(git_repo)
    foreign_hook(underscore / "post-commit", text=HUSKY_STUB)  # `npm install` ran husky again
    assert not git_hooks.inspect(locate(git_repo))["post-commit"]["path"]
    hooks_only(git_repo)
    assert git_hooks.is_ours(underscore / "post-commit")
    assert (underscore / "post-commit.legacy").read_text() == HUSKY_STUB


def test_uninstall_without_a_record_still_removes_ours_and_restores_the_kept_hook(git_repo: Path) -> None:
    original = foreign_hook(git_repo / ".git/hooks/post-commit")
    hooks_only(git_repo)
    state.state_path(git_repo / ".git").unlink()
    uninstall(git_repo)
    assert (git_repo / ".git/hooks/post-commit").read_bytes() == original
    assert not (git_repo / ".git/hooks/post-merge").exists()


def test_a_kept_hook_that_install_did_not_move_stays_where_it_was(git_repo: Path) -> None:
    leftover = foreign_hook(git_repo / ".git/hooks/post-commit.legacy")
    hooks_only(git_repo)
    uninstall(git_repo)
    assert (git_repo / ".git/hooks/post-commit.legacy").read_bytes() == leftover
    assert not (git_repo / ".git/hooks/post-commit").exists()


def test_the_script_template_runs_as_shipped(git_repo: Path, tmp_path: Path) -> None:
    """Copied by hand without install's substitutions, a script falls back to `gitive-hook` on PATH."""
    bin_dir = tmp_path / "bin"
    path = _path_with_only("git", "sh", "cat", bin_dir)
    log = tmp_path / "calls.txt"
    foreign_hook(bin_dir / "gitive-hook", text=f"#!/bin/sh\necho \"$*\" >> '{log}'\ncat >> '{log}'\n")
    hooks = git_repo / ".git/hooks"
    hooks.mkdir(exist_ok=True)
    for hook in git_hooks.HOOKS:
        shutil.copy(git_hooks.template(hook), hooks / hook)
    commit(git_repo, "a.txt", "raw template", env={"PATH": path})
    subprocess.run(["git", "commit", "-q", "--amend", "-m", "amended"], cwd=git_repo, check=True,
                   env={**os.environ, "PATH": path})
    lines = log.read_text().splitlines()
    assert lines[:2] == ["git post-commit", "git post-commit"]
    assert lines[2] == "git post-rewrite amend" and len(lines[3].split()) == 2
