"""Ref movements from two snapshots of a remote's branches: created, moved, forced, deleted, tagged, merged."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitive.store import watch
from testing import fixtures


@pytest.fixture
def hosted(bare_remote: Path, make_clone: Callable[[str | Path, str], Path]) -> tuple[Path, Path]:
    """A remote (as a git host would hold it) and a clone that pushes to it; the watcher is a second clone."""
    return make_clone(bare_remote, "dev"), make_clone(bare_remote, "anchor")


def _git(repo: Path, *args: str) -> str:
    return fixtures.run_git(list(args), cwd=repo)


def _snapshot(clone: Path) -> tuple[pygit2.Repository, dict[str, str]]:
    repo = pygit2.Repository(str(clone))
    watch.fetch_all(repo, "origin")
    return repo, watch.tips(repo, "origin")


def _actions(moves: list[watch.Movement]) -> set[tuple[str, str]]:
    return {(m.action, m.name) for m in moves}


def test_created_moved_deleted_and_tagged(hosted: tuple[Path, Path]) -> None:
    dev, anchor = hosted
    _, before = _snapshot(anchor)
    _git(dev, "checkout", "-q", "-b", "topic")
    fixtures.commit_file(dev, "a.txt", "a\n")
    _git(dev, "push", "-q", "origin", "topic")
    _git(dev, "tag", "-a", "-m", "release", "v1")
    _git(dev, "push", "-q", "origin", "v1")
    repo, middle = _snapshot(anchor)
    assert _actions(watch.movements(repo, before, middle)) == {("branch_created", "topic"), ("tag_created", "v1")}
    assert middle["tags/v1"] == middle["heads/topic"]  # an annotated tag is peeled to its commit
    fixtures.commit_file(dev, "b.txt", "b\n")
    _git(dev, "push", "-q", "origin", "topic")
    _git(dev, "push", "-q", "origin", ":refs/tags/v1")
    repo, after = _snapshot(anchor)
    [moved] = watch.movements(repo, middle, after)
    assert (moved.action, moved.name, moved.previous, moved.forced) == ("branch_moved", "topic", middle["heads/topic"],
                                                                        False)
    _git(dev, "reset", "-q", "--hard", "HEAD~2")
    _git(dev, "push", "-q", "--force", "origin", "topic")
    repo, forced = _snapshot(anchor)
    assert [m.forced for m in watch.movements(repo, after, forced)] == [True]
    _git(dev, "push", "-q", "origin", ":topic")
    repo, gone = _snapshot(anchor)
    assert _actions(watch.movements(repo, forced, gone)) == {("branch_deleted", "topic")}


def test_a_merge_commit_names_both_branches_and_the_merge(hosted: tuple[Path, Path]) -> None:
    dev, anchor = hosted
    _git(dev, "checkout", "-q", "-b", "auth-rotation")
    fixtures.commit_file(dev, "auth.py", "x\n")
    _git(dev, "push", "-q", "origin", "auth-rotation")
    _git(dev, "checkout", "-q", "main")
    fixtures.commit_file(dev, "other.py", "y\n")  # main moved on: the merge cannot be a fast-forward
    _, before = _snapshot(anchor)
    _git(dev, "merge", "-q", "--no-ff", "-m", "merge", "auth-rotation")
    fixtures.commit_file(dev, "after.py", "z\n")  # and a commit after the merge, in the same push
    _git(dev, "push", "-q", "origin", "main")
    repo, after = _snapshot(anchor)
    merges = [m for m in watch.movements(repo, before, after) if m.action == "merged"]
    merge_commit = _git(dev, "rev-parse", "HEAD~1").strip()
    assert [(m.name, m.into, m.commit, m.tip) for m in merges] == [
        ("auth-rotation", "main", merge_commit, before["heads/auth-rotation"])]


def test_a_fast_forward_is_a_merge_of_a_branch_seen_before(hosted: tuple[Path, Path]) -> None:
    dev, anchor = hosted
    _git(dev, "checkout", "-q", "-b", "quick")
    tip = fixtures.commit_file(dev, "q.txt", "q\n")
    _git(dev, "push", "-q", "origin", "quick")
    _, before = _snapshot(anchor)
    _git(dev, "push", "-q", "origin", "quick:main")
    repo, after = _snapshot(anchor)
    merged = [m for m in watch.movements(repo, before, after) if m.action == "merged"]
    assert [(m.name, m.into, m.commit) for m in merged] == [("quick", "main", tip)]


def test_a_branch_created_on_a_commit_main_passed_is_not_merged(hosted: tuple[Path, Path]) -> None:
    dev, anchor = hosted
    _, before = _snapshot(anchor)
    middle = fixtures.commit_file(dev, "m1.txt", "1\n")
    fixtures.commit_file(dev, "m2.txt", "2\n")
    _git(dev, "push", "-q", "origin", "main", f"{middle}:refs/heads/fork")
    repo, after = _snapshot(anchor)
    assert _actions(watch.movements(repo, before, after)) == {("branch_moved", "main"), ("branch_created", "fork")}


def test_a_squash_merge_is_not_reported_as_a_merge(hosted: tuple[Path, Path]) -> None:
    dev, anchor = hosted
    _git(dev, "checkout", "-q", "-b", "squashed")
    fixtures.commit_file(dev, "s.txt", "s\n")
    _git(dev, "push", "-q", "origin", "squashed")
    _git(dev, "checkout", "-q", "main")
    _, before = _snapshot(anchor)
    _git(dev, "merge", "-q", "--squash", "squashed")
    _git(dev, "commit", "-q", "-m", "squash")
    _git(dev, "push", "-q", "origin", "main")
    repo, after = _snapshot(anchor)
    assert "merged" not in {m.action for m in watch.movements(repo, before, after)}


def test_a_hive_ref_gone_from_the_remote_keeps_its_last_copy(hosted: tuple[Path, Path], bare_remote: Path) -> None:
    dev, anchor = hosted
    tip = _git(dev, "rev-parse", "HEAD").strip()
    _git(dev, "push", "-q", "origin", f"{tip}:refs/hive/presence/{'a' * 64}")
    repo, _ = _snapshot(anchor)
    name = f"refs/hive-remotes/origin/presence/{'a' * 64}"
    assert repo.references[name].target == pygit2.Oid(hex=tip)
    _git(dev, "push", "-q", "origin", f":refs/hive/presence/{'a' * 64}")
    repo, _ = _snapshot(anchor)  # --prune drops watched branches, never a hive ref's last copy
    assert str(repo.references[name].target) == tip


@settings(max_examples=8, deadline=None)
@given(st.lists(st.sampled_from(["merge", "leave", "squash"]), min_size=1, max_size=4))
def test_exactly_the_branches_merged_with_a_merge_commit_are_reported(tmp_path_factory: pytest.TempPathFactory,
                                                                      plan: list[str]) -> None:
    base = tmp_path_factory.mktemp("watch")
    remote = fixtures.init_bare(base / "remote.git")
    dev, anchor = fixtures.clone(remote, base / "dev"), fixtures.clone(remote, base / "anchor")
    for i, _ in enumerate(plan):
        _git(dev, "checkout", "-q", "-b", f"b{i}", "main")
        fixtures.commit_file(dev, f"f{i}.txt", f"{i}\n")
        _git(dev, "push", "-q", "origin", f"b{i}")
    _git(dev, "checkout", "-q", "main")
    _, before = _snapshot(anchor)
    for i, what in enumerate(plan):
        if what == "merge":
            _git(dev, "merge", "-q", "--no-ff", "-m", f"merge b{i}", f"b{i}")
        elif what == "squash":
            _git(dev, "merge", "-q", "--squash", f"b{i}")
            _git(dev, "commit", "-q", "-m", f"squash b{i}")
    _git(dev, "push", "-q", "origin", "main")
    repo, after = _snapshot(anchor)
    merged = {m.name for m in watch.movements(repo, before, after) if m.action == "merged"}
    assert merged == {f"b{i}" for i, what in enumerate(plan) if what == "merge"}


def test_a_branch_pushed_merged_and_deleted_between_two_fetches_is_named_from_its_merge(
        hosted: tuple[Path, Path]) -> None:
    dev, anchor = hosted
    fixtures.commit_file(dev, "base.txt", "b\n")
    _git(dev, "push", "-q", "origin", "main")
    _, before = _snapshot(anchor)
    _git(dev, "checkout", "-q", "-b", "auth-rotation")
    tip = fixtures.commit_file(dev, "auth.py", "x\n")
    _git(dev, "checkout", "-q", "main")
    fixtures.commit_file(dev, "main.txt", "m\n")
    _git(dev, "merge", "-q", "--no-ff", "-m", "Merge pull request #12 from acme/auth-rotation", "auth-rotation")
    _git(dev, "push", "-q", "origin", "main")  # the branch itself never reached the remote
    repo, after = _snapshot(anchor)
    merged = [m for m in watch.movements(repo, before, after) if m.action == "merged"]
    assert [(m.name, m.into, m.tip, m.commit) for m in merged] == [
        ("auth-rotation", "main", tip, _git(dev, "rev-parse", "HEAD").strip())]


def test_merge_messages_name_the_branch() -> None:
    assert watch._merged_name("Merge branch 'auth-rotation'") == "auth-rotation"
    assert watch._merged_name("Merge branch 'feature/x' into 'main'") == "feature/x"
    assert watch._merged_name("Merge remote-tracking branch 'origin/fix-1'\n\nbody") == "fix-1"
    assert watch._merged_name("Merge pull request #7 from acme/fix-2") == "fix-2"
    assert watch._merged_name("fix the thing") is None


def _walked_merge_commit(repo: pygit2.Repository, new: str, tip: str, old: str | None) -> str:
    """The first-parent walk merge_commit replaced (one reachability query per commit of the line)."""
    found, oid = new, new
    for _ in range(watch.MAX_WALK):
        if oid == old:
            break
        commit = repo[oid]
        if oid == tip:
            return tip
        parents = commit.parent_ids
        if not parents or not (str(parents[0]) == tip or repo.descendant_of(str(parents[0]), tip)):
            return oid
        found, oid = oid, str(parents[0])
    return found


@settings(max_examples=15, deadline=None)
@given(st.lists(st.sampled_from(["merge", "commit", "fast-forward"]), min_size=1, max_size=12))
def test_merge_commit_bisects_to_what_the_walk_finds(tmp_path_factory: pytest.TempPathFactory, steps: list[str]
                                                     ) -> None:
    # A main line made of merges, plain commits and fast-forwards in any order: for every branch that became
    # reachable, bisection and the walk name the same commit.
    path = tmp_path_factory.mktemp("line")
    repo = pygit2.init_repository(str(path))
    sig = pygit2.Signature("dev", "dev@example.com", 1_700_000_000, 0)

    def commit(parents: list[str], text: str) -> str:
        builder = repo.TreeBuilder()
        builder.insert("f", repo.create_blob(text.encode()), pygit2.enums.FileMode.BLOB)
        return str(repo.create_commit(None, sig, sig, text, builder.write(), [pygit2.Oid(hex=p) for p in parents]))

    old = main = commit([], "root")
    tips = []
    for n, step in enumerate(steps):
        side = commit([main], f"side {n}")
        side = commit([side], f"side {n} again")
        tips.append(side)
        if step == "merge":
            main = commit([main, side], f"merge {n}")
        elif step == "fast-forward":
            main = side
        else:
            main = commit([main], f"main {n}")
    line = watch.first_parent_line(repo, main, old)
    for tip in tips:
        if tip == old or (tip != main and not repo.descendant_of(main, tip)):
            continue
        expected = _walked_merge_commit(repo, main, tip, old)
        assert watch.merge_commit(repo, main, tip, old) == expected
        assert watch.merge_commit(repo, main, tip, old, line) == expected
