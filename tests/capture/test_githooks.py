"""The git-hook handlers through real ``git commit``, ``--amend``, ``rebase`` and ``merge`` in temp repositories.

Each repository gets minimal hook scripts that call ``main_cli`` the way the installed scripts do, so these
tests exercise the handlers alone (installation has its own tests in ``tests/install/``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from gitive.capture import events, githooks
from testing.fixtures import init_repo, run_git

HOOKS = ("post-commit", "post-merge", "post-rewrite")


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def add_hooks(repo: Path) -> None:
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(parents=True, exist_ok=True)
    for hook in HOOKS:
        path = hooks / hook
        path.write_text(f"#!/bin/sh\nexec '{sys.executable}' -c "
                        f"'from gitive.capture.githooks import main_cli; main_cli()' {hook} \"$@\"\n")
        path.chmod(0o755)


@pytest.fixture
def repo(git_repo: Path) -> Path:
    add_hooks(git_repo)
    return git_repo


def commit(repo: Path, name: str, content: str, message: str) -> str:
    (repo / name).parent.mkdir(parents=True, exist_ok=True)
    (repo / name).write_text(content)
    run_git(["add", "--", name], cwd=repo)
    run_git(["commit", "-q", "-m", message], cwd=repo)
    return head(repo)


def head(repo: Path, rev: str = "HEAD") -> str:
    return run_git(["rev-parse", rev], cwd=repo).strip()


def recorded(action: str) -> list[dict[str, Any]]:
    return list(events.read(actions=(action,)))


def edit(session: str, paths: list[str], cwd: Path | None, *, harness: str = "claude", op: str = "modify",
         ts: int | None = None) -> None:
    events.append(events.make("tool.completed", harness=harness, session=session,
                              cwd=str(cwd) if cwd else None, ts=ts, tool={"name": "Edit"},
                              file={"paths": paths, "op": op}))


def test_post_commit_records_the_commit_metadata(repo: Path) -> None:
    sha = commit(repo, "src/app.py", "print(1)\n", "add the app\n\nwith a body that is not recorded")
    [event] = recorded("vcs.commit")
    vcs = event["vcs"]
    assert vcs["revision"] == sha
    assert vcs["parents"] == [head(repo, "HEAD~1")]
    assert vcs["branch"] == "main"
    assert vcs["files"] == ["src/app.py"]
    assert vcs["subject"] == "add the app"
    assert vcs["repository"] == str(repo.resolve())
    assert vcs["author"] == {"name": "Gitive Test", "email": "test@gitive.invalid"}
    assert event["harness"] == {"name": "git"}
    assert "diff" not in event and "sessions" not in event


def test_post_commit_of_a_root_commit_lists_every_file(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "fresh", first_commit=False)
    add_hooks(repo)
    commit(repo, "a.txt", "a\n", "root")
    [event] = recorded("vcs.commit")
    assert event["vcs"]["files"] == ["a.txt"] and event["vcs"]["parents"] == []


def test_sessions_that_modified_the_files_are_linked_as_inferred(repo: Path, tmp_path: Path) -> None:
    elsewhere = init_repo(tmp_path / "other")
    edit("s-rel", ["src/a.py"], repo, harness="claude")
    edit("s-abs", [str(repo / "src" / "a.py")], None, harness="codex")
    edit("s-sub", ["a.py"], repo / "src", harness="cursor")  # relative to a subdirectory the session ran in
    edit("s-read", ["src/a.py"], repo, op="read")
    edit("s-other-file", ["src/b.py"], repo)
    edit("s-other-repo", ["src/a.py"], elsewhere)
    edit("s-no-cwd", ["src/a.py"], None)  # a relative path with nothing to anchor it
    edit("s-old", ["src/a.py"], repo, ts=now_ms() - githooks.WINDOW_MS - 60_000)
    commit(repo, "src/a.py", "x = 1\n", "change a")
    [event] = recorded("vcs.commit")
    sessions = {s["id"]: s for s in event["sessions"]}
    assert set(sessions) == {"s-rel", "s-abs", "s-sub"}
    assert all(s["fidelity"] == "inferred" and s["files"] == ["src/a.py"] for s in sessions.values())
    assert sessions["s-abs"]["harness"] == "codex"


def test_sessions_are_most_recent_first_with_all_overlapping_files(repo: Path) -> None:
    now = now_ms()
    edit("early", ["one.txt"], repo, ts=now - 3_600_000)
    edit("late", ["two.txt"], repo, ts=now - 60_000)
    edit("early", ["two.txt"], repo, ts=now - 120_000)
    (repo / "one.txt").write_text("1\n")
    (repo / "two.txt").write_text("2\n")
    run_git(["add", "one.txt", "two.txt"], cwd=repo)
    run_git(["commit", "-q", "-m", "both"], cwd=repo)
    [event] = recorded("vcs.commit")
    assert [s["id"] for s in event["sessions"]] == ["late", "early"]
    assert event["sessions"][1]["files"] == ["one.txt", "two.txt"]


def test_amend_records_the_rewrite_and_resolves_the_old_commit(repo: Path) -> None:
    old = commit(repo, "a.txt", "a\n", "first try")
    run_git(["commit", "-q", "--amend", "-m", "second try"], cwd=repo)
    new = head(repo)
    assert new != old
    [event] = recorded("vcs.rewrite")
    assert event["vcs"]["kind"] == "amend"
    assert event["vcs"]["rewrites"] == [{"old": old, "new": new}]
    assert githooks.resolve_rewritten(repo / ".git", old) == new
    assert [e["vcs"]["revision"] for e in recorded("vcs.commit")] == [old, new]


def test_rebase_after_amend_resolves_through_the_chain(repo: Path) -> None:
    run_git(["checkout", "-q", "-b", "topic"], cwd=repo)
    first = commit(repo, "t.txt", "t\n", "topic work")
    run_git(["commit", "-q", "--amend", "-m", "topic work, amended"], cwd=repo)
    amended = head(repo)
    run_git(["checkout", "-q", "main"], cwd=repo)
    commit(repo, "m.txt", "m\n", "main moves on")
    run_git(["checkout", "-q", "topic"], cwd=repo)
    run_git(["rebase", "-q", "main"], cwd=repo)
    rebased = head(repo)
    assert len({first, amended, rebased}) == 3
    kinds = [e["vcs"]["kind"] for e in recorded("vcs.rewrite")]
    assert kinds == ["amend", "rebase"]
    rebase_event = recorded("vcs.rewrite")[1]
    assert rebase_event["vcs"]["rewrites"] == [{"old": amended, "new": rebased}]
    assert rebase_event["vcs"]["branch"] == "topic"
    assert githooks.resolve_rewritten(repo / ".git", first) == rebased
    assert githooks.resolve_rewritten(str(repo / ".git"), amended) == rebased
    # the picked commit is recorded by post-commit during the rebase, on the branch being rebased
    assert recorded("vcs.commit")[-1]["vcs"]["revision"] == rebased
    assert recorded("vcs.commit")[-1]["vcs"]["branch"] == "topic"


def test_resolve_rewritten_of_an_unknown_or_unrewritten_commit_is_itself(repo: Path) -> None:
    sha = head(repo)
    assert githooks.resolve_rewritten(repo / ".git", sha) == sha
    githooks.record_rewrites(repo / ".git", [("a" * 40, "b" * 40)])
    assert githooks.resolve_rewritten(repo / ".git", sha) == sha
    assert githooks.resolve_rewritten(repo / ".git", "A" * 40) == "b" * 40


def test_resolve_rewritten_stops_on_a_cycle_and_later_rewrites_win(tmp_path: Path) -> None:
    git_dir = tmp_path / "git"
    a, b, c = "a" * 40, "b" * 40, "c" * 40
    githooks.record_rewrites(git_dir, [(a, b), (b, a)])
    assert githooks.resolve_rewritten(git_dir, a) == b
    githooks.record_rewrites(git_dir, [(a, c)])
    assert githooks.resolve_rewritten(git_dir, a) == c


def test_rewrites_of_a_linked_worktree_go_to_the_common_dir(repo: Path, tmp_path: Path) -> None:
    run_git(["worktree", "add", "-q", "-b", "side", str(tmp_path / "wt")], cwd=repo)
    wt = tmp_path / "wt"
    old = commit(wt, "w.txt", "w\n", "in the worktree")
    run_git(["commit", "-q", "--amend", "-m", "amended in the worktree"], cwd=wt)
    new = head(wt)
    assert (repo / ".git" / "gitive" / "rewrites").read_text() == f"{old} {new}\n"
    worktree_git_dir = Path(run_git(["rev-parse", "--absolute-git-dir"], cwd=wt).strip())
    assert githooks.resolve_rewritten(worktree_git_dir, old) == new
    assert recorded("vcs.commit")[-1]["vcs"]["branch"] == "side"


def test_merge_records_head_previous_and_files(repo: Path) -> None:
    run_git(["checkout", "-q", "-b", "feature"], cwd=repo)
    commit(repo, "f.txt", "f\n", "feature")
    run_git(["checkout", "-q", "main"], cwd=repo)
    before = commit(repo, "m.txt", "m\n", "main")
    run_git(["merge", "-q", "--no-edit", "feature"], cwd=repo)
    [event] = recorded("vcs.merge")
    vcs = event["vcs"]
    assert vcs["revision"] == head(repo) and vcs["previous"] == before
    assert vcs["files"] == ["f.txt"] and vcs["squash"] is False
    assert len(vcs["parents"]) == 2 and vcs["branch"] == "main"


def test_fast_forward_and_squash_merges(repo: Path) -> None:
    start = head(repo)
    run_git(["checkout", "-q", "-b", "ff"], cwd=repo)
    tip = commit(repo, "ff.txt", "1\n", "ff")
    run_git(["checkout", "-q", "-b", "sq", start], cwd=repo)
    commit(repo, "sq.txt", "1\n", "sq")
    run_git(["checkout", "-q", "main"], cwd=repo)
    run_git(["merge", "-q", "ff"], cwd=repo)
    run_git(["merge", "-q", "--squash", "sq"], cwd=repo)
    ff, squash = recorded("vcs.merge")
    assert (ff["vcs"]["revision"], ff["vcs"]["previous"], ff["vcs"]["files"]) == (tip, start, ["ff.txt"])
    assert squash["vcs"]["squash"] is True and squash["vcs"]["files"] == ["sq.txt"]
    assert squash["vcs"]["revision"] == tip


def test_main_never_raises_outside_a_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                gitive_home: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    githooks.main("post-commit", [], "")
    githooks.main("post-merge", ["0"], "")
    githooks.main("post-rewrite", ["amend"], f"{'a' * 40} {'b' * 40}\n")
    githooks.main("no-such-hook", [], "")
    log = (gitive_home / "logs" / githooks.FAILURE_LOG).read_text().splitlines()
    assert [line.split()[1] for line in log] == ["post-commit:", "post-merge:", "post-rewrite:"]
    assert recorded("vcs.commit") == []


def test_main_survives_an_unwritable_event_log(repo: Path, gitive_home: Path) -> None:
    gitive_home.parent.mkdir(parents=True, exist_ok=True)
    gitive_home.write_text("a file where the home directory should be")
    commit(repo, "a.txt", "a\n", "still commits")  # the hook fails inside, the commit does not
    assert run_git(["log", "-1", "--format=%s"], cwd=repo).strip() == "still commits"


def test_post_rewrite_ignores_lines_that_are_not_commit_pairs(repo: Path) -> None:
    assert githooks.parse_rewrites(f"junk\n{'a' * 40}\n{'a' * 40} {'b' * 40} extra\nx y\n") == [
        ("a" * 40, "b" * 40)]
    githooks.main("post-rewrite", ["amend"], "nothing useful\n")
    assert recorded("vcs.rewrite") == []


def test_main_cli_reads_post_rewrite_input(repo: Path) -> None:
    old, new = head(repo), "c" * 40
    proc = subprocess.run([sys.executable, "-c", "from gitive.capture.githooks import main_cli; main_cli()",
                           "post-rewrite", "rebase"], input=f"{old} {new}\n", text=True, cwd=repo,
                          capture_output=True)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")
    assert githooks.resolve_rewritten(repo / ".git", old) == new


def test_the_module_imports_only_the_standard_library() -> None:
    code = ("import sys; import gitive.capture.githooks; "
            "print(' '.join(sorted(m for m in sys.modules if m.startswith('gitive'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["gitive", "gitive.capture", "gitive.capture.githooks"]


def test_a_commit_made_with_git_dir_set_is_recorded(repo: Path, tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    (repo / "g.txt").write_text("g\n")
    env = {**os.environ, "GIT_DIR": str(repo / ".git"), "GIT_WORK_TREE": str(repo)}
    subprocess.run(["git", "add", "g.txt"], cwd=repo, env=env, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "with GIT_DIR"], cwd=tmp_path / "elsewhere", env=env, check=True)
    [event] = recorded("vcs.commit")
    assert event["vcs"]["files"] == ["g.txt"]
