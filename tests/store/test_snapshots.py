"""Signed snapshot commits for the rewritable refs."""

from __future__ import annotations

import pygit2
import pytest

from gitive.store import snapshots
from testing.builders import OTHER_TEAM_ID, TEAM_ID, machine

A = machine("a")
B = machine("b")


def _tree(repo: pygit2.Repository, content: bytes = b"x") -> pygit2.Oid:
    builder = repo.TreeBuilder()
    builder.insert("file", repo.create_blob(content), pygit2.enums.FileMode.BLOB)
    return builder.write()


def test_write_makes_a_parentless_commit_with_a_signature_trailer(bare_repo: pygit2.Repository,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITIVE_NOW_MS", "1700000000000")
    tree = _tree(bare_repo)
    oid = snapshots.write(bare_repo, A.key, TEAM_ID, "presence", tree, "presence of a")
    commit = bare_repo[oid]
    assert commit.parent_ids == []
    assert commit.tree_id == tree
    assert commit.message.startswith("presence of a\n\n" + snapshots.TRAILER)
    assert commit.author.email == f"{A.id}@hive" and commit.author.time == 1_700_000_000
    assert snapshots.write(bare_repo, A.key, TEAM_ID, "presence", str(tree), "presence of a") == oid


def test_signature_ok_checks_team_kind_and_machine(bare_repo: pygit2.Repository) -> None:
    oid = snapshots.write(bare_repo, A.key, TEAM_ID, "presence", _tree(bare_repo), "t")
    assert snapshots.signature_ok(bare_repo, TEAM_ID, "presence", A.id, oid)
    assert not snapshots.signature_ok(bare_repo, OTHER_TEAM_ID, "presence", A.id, oid)
    assert not snapshots.signature_ok(bare_repo, TEAM_ID, "bodies", A.id, oid)
    assert not snapshots.signature_ok(bare_repo, TEAM_ID, "presence", B.id, oid)


def test_signature_ok_refuses_a_signature_moved_onto_another_tree(bare_repo: pygit2.Repository) -> None:
    original = bare_repo[snapshots.write(bare_repo, A.key, TEAM_ID, "bodies", _tree(bare_repo), "t")]
    who = pygit2.Signature("x", "x@hive", 0, 0)
    moved = bare_repo.create_commit(None, who, who, original.message, _tree(bare_repo, b"other"), [])
    assert not snapshots.signature_ok(bare_repo, TEAM_ID, "bodies", A.id, str(moved))


def test_signature_ok_refuses_non_snapshots(bare_repo: pygit2.Repository) -> None:
    parent = snapshots.write(bare_repo, A.key, TEAM_ID, "bodies", _tree(bare_repo), "t")
    tree = _tree(bare_repo)
    original = bare_repo[parent]
    who = pygit2.Signature("x", "x@hive", 0, 0)
    child = bare_repo.create_commit(None, who, who, original.message, tree, [pygit2.Oid(hex=parent)])
    unsigned = bare_repo.create_commit(None, who, who, "no trailer\n", tree, [])
    assert not snapshots.signature_ok(bare_repo, TEAM_ID, "bodies", A.id, str(child))  # has a parent
    assert not snapshots.signature_ok(bare_repo, TEAM_ID, "bodies", A.id, str(unsigned))
    assert not snapshots.signature_ok(bare_repo, TEAM_ID, "bodies", A.id, str(tree))  # not a commit
    assert not snapshots.signature_ok(bare_repo, TEAM_ID, "bodies", A.id, "0" * 40)  # missing
    assert not snapshots.signature_ok(bare_repo, TEAM_ID, "bodies", A.id, "nonsense")
