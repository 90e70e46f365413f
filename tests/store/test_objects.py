"""Questions about ordinary git objects that the layers above store/ ask (blobs, commit trees, presence)."""

from __future__ import annotations

from pathlib import Path

from gitive.store import objects
from gitive.store import repo as repos
from testing.fixtures import commit_file, run_git


def _ids(repo: Path, rev: str = "HEAD") -> tuple[str, str, str]:
    commit = run_git(["rev-parse", rev], cwd=repo).strip()
    tree = run_git(["rev-parse", f"{rev}^{{tree}}"], cwd=repo).strip()
    blob = run_git(["rev-parse", f"{rev}:notes.txt"], cwd=repo).strip()
    return commit, tree, blob


def test_blob_data_reads_a_small_blob_and_nothing_else(git_repo: Path) -> None:
    commit_file(git_repo, "notes.txt", "twelve bytes")
    commit, tree, blob = _ids(git_repo)
    opened = repos.open_repo(git_repo)
    assert objects.blob_data(opened, blob, 12) == b"twelve bytes"
    assert objects.blob_data(opened, blob, 11) is None  # larger than asked for
    assert objects.blob_data(opened, tree, 1 << 20) is None  # a tree
    assert objects.blob_data(opened, commit, 1 << 20) is None  # a commit
    assert objects.blob_data(opened, "0" * 40, 1 << 20) is None  # missing
    assert objects.blob_data(opened, "not hex", 1 << 20) is None


def test_commit_tree_is_the_tree_of_a_commit_and_never_of_another_object(git_repo: Path) -> None:
    commit_file(git_repo, "notes.txt", "text")
    commit, tree, blob = _ids(git_repo)
    run_git(["tag", "-a", "-m", "a tag", "v1"], cwd=git_repo)
    tag = run_git(["rev-parse", "v1"], cwd=git_repo).strip()
    opened = repos.open_repo(git_repo)
    assert objects.commit_tree(opened, commit) == tree
    for other in (tree, blob, tag, "0" * 40, "zz"):
        assert objects.commit_tree(opened, other) is None, other


def test_present_says_whether_an_object_is_there(git_repo: Path) -> None:
    commit_file(git_repo, "notes.txt", "text")
    commit, tree, blob = _ids(git_repo)
    opened = repos.open_repo(git_repo)
    assert all(objects.present(opened, oid) for oid in (commit, tree, blob))
    assert not objects.present(opened, "0" * 40)
    assert not objects.present(opened, "no object id")
