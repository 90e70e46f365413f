"""The body store: one signed parentless snapshot per machine, found across fetched peers, rewritten on delete."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from gitive.core.ids import blake3_hex
from gitive.errors import InvalidRecord
from gitive.store import bodies, refs, snapshots
from testing import fixtures
from testing.builders import OTHER_TEAM_ID, TEAM_ID, machine
from testing.fixtures import run_git

ALICE = machine("alice")
BOB = machine("bob")


def h(data: bytes) -> str:
    return blake3_hex(data)


def put(repo: pygit2.Repository, data: bytes, who=ALICE) -> bool:
    return bodies.put(repo, who.key, TEAM_ID, h(data), data)


def test_put_then_get(bare_repo: pygit2.Repository) -> None:
    assert put(bare_repo, b"first body")
    assert bodies.get(bare_repo, h(b"first body")) == b"first body"
    assert bodies.get(bare_repo, h(b"never stored")) is None


def test_put_twice_is_a_no_op(bare_repo: pygit2.Repository) -> None:
    assert put(bare_repo, b"body")
    tip = refs.tip(bare_repo, refs.bodies_ref(ALICE.id))
    assert not put(bare_repo, b"body")
    assert refs.tip(bare_repo, refs.bodies_ref(ALICE.id)) == tip


def test_hashes_lists_this_machines_bodies(bare_repo: pygit2.Repository) -> None:
    assert bodies.hashes(bare_repo, ALICE.id) == []
    for data in (b"a", b"b", b"c"):
        put(bare_repo, data)
    put(bare_repo, b"bob's", BOB)
    assert sorted(bodies.hashes(bare_repo, ALICE.id)) == sorted(h(d) for d in (b"a", b"b", b"c"))
    assert bodies.hashes(bare_repo, BOB.id) == [h(b"bob's")]


def test_every_version_is_one_signed_parentless_snapshot(bare_repo: pygit2.Repository) -> None:
    for data in (b"a", b"b"):
        put(bare_repo, data)
        tip = refs.tip(bare_repo, refs.bodies_ref(ALICE.id))
        assert bare_repo[tip].parent_ids == []
        assert snapshots.signature_ok(bare_repo, TEAM_ID, "bodies", ALICE.id, tip)
    assert not snapshots.signature_ok(bare_repo, OTHER_TEAM_ID, "bodies", ALICE.id, tip)
    assert not snapshots.signature_ok(bare_repo, TEAM_ID, "presence", ALICE.id, tip)
    assert not snapshots.signature_ok(bare_repo, TEAM_ID, "bodies", BOB.id, tip)


def test_delete_rewrites_to_a_parentless_signed_commit(bare_repo: pygit2.Repository) -> None:
    for data in (b"keep", b"retract-1", b"retract-2"):
        put(bare_repo, data)
    assert bodies.delete(bare_repo, ALICE.key, TEAM_ID, [h(b"retract-1"), h(b"retract-2")])
    tip = refs.tip(bare_repo, refs.bodies_ref(ALICE.id))
    commit = bare_repo[tip]
    assert commit.parent_ids == []
    assert [item.name for item in commit.tree] == [h(b"keep")]
    assert snapshots.signature_ok(bare_repo, TEAM_ID, "bodies", ALICE.id, tip)
    assert bodies.get(bare_repo, h(b"retract-1")) is None
    assert bodies.get(bare_repo, h(b"keep")) == b"keep"
    assert bodies.hashes(bare_repo, ALICE.id) == [h(b"keep")]


def test_delete_of_absent_bodies_changes_nothing(bare_repo: pygit2.Repository) -> None:
    assert not bodies.delete(bare_repo, ALICE.key, TEAM_ID, [h(b"nothing")])  # no store yet
    put(bare_repo, b"x")
    tip = refs.tip(bare_repo, refs.bodies_ref(ALICE.id))
    assert not bodies.delete(bare_repo, ALICE.key, TEAM_ID, [h(b"nothing")])
    assert refs.tip(bare_repo, refs.bodies_ref(ALICE.id)) == tip


def test_delete_everything_leaves_an_empty_signed_snapshot(bare_repo: pygit2.Repository) -> None:
    put(bare_repo, b"only")
    assert bodies.delete(bare_repo, ALICE.key, TEAM_ID, [h(b"only")])
    tip = refs.tip(bare_repo, refs.bodies_ref(ALICE.id))
    assert len(bare_repo[tip].tree) == 0
    assert snapshots.signature_ok(bare_repo, TEAM_ID, "bodies", ALICE.id, tip)
    assert bodies.hashes(bare_repo, ALICE.id) == []


def test_deleted_body_is_gone_from_history_of_the_ref(bare_repo: pygit2.Repository, tmp_path: Path) -> None:
    put(bare_repo, b"secret")
    bodies.delete(bare_repo, ALICE.key, TEAM_ID, [h(b"secret")])
    listed = run_git(["rev-list", "--objects", refs.bodies_ref(ALICE.id)], cwd=bare_repo.path)
    assert str(bare_repo.create_blob(b"secret")) not in listed


@pytest.mark.parametrize("bad", ["", "ab", "AB" * 32, "zz" * 32, "ab" * 33, "../" + "a" * 61])
def test_bad_hashes_are_refused(bare_repo: pygit2.Repository, bad: str) -> None:
    with pytest.raises(InvalidRecord, match="body hash"):
        bodies.put(bare_repo, ALICE.key, TEAM_ID, bad, b"x")
    with pytest.raises(InvalidRecord, match="body hash"):
        bodies.get(bare_repo, bad)
    with pytest.raises(InvalidRecord, match="body hash"):
        bodies.delete(bare_repo, ALICE.key, TEAM_ID, [h(b"ok"), bad])
    assert refs.tips(bare_repo, "refs/") == {}


def test_get_finds_bodies_fetched_from_a_peer(tmp_path: Path) -> None:
    peer = pygit2.Repository(str(fixtures.init_bare(tmp_path / "bob.git")))
    bodies.put(peer, BOB.key, TEAM_ID, h(b"bob's body"), b"bob's body")
    mine = pygit2.Repository(str(fixtures.init_bare(tmp_path / "alice.git")))
    put(mine, b"alice's body")
    run_git(["fetch", "--quiet", str(tmp_path / "bob.git"), "+refs/hive/*:refs/hive-remotes/origin/*"],
            cwd=mine.path)
    assert f"refs/hive-remotes/origin/bodies/{BOB.id}" in refs.tips(mine, "refs/hive-remotes/")
    assert bodies.get(mine, h(b"bob's body")) == b"bob's body"
    assert bodies.get(mine, h(b"alice's body")) == b"alice's body"
    assert bodies.hashes(mine, BOB.id) == []  # hashes() lists only this repository's own store of a machine


def test_get_ignores_refs_outside_body_stores(bare_repo: pygit2.Repository) -> None:
    put(bare_repo, b"x", BOB)
    tip = refs.tip(bare_repo, refs.bodies_ref(BOB.id))
    bare_repo.references.create("refs/heads/bodies", tip)
    bare_repo.references.create(f"refs/hive-remotes/origin/presence/{BOB.id}", tip)
    refs.delete(bare_repo, refs.bodies_ref(BOB.id))
    assert bodies.get(bare_repo, h(b"x")) is None
    bare_repo.references.create(f"refs/hive-remotes/origin/bodies/{BOB.id}", tip)
    assert bodies.get(bare_repo, h(b"x")) == b"x"


def test_a_machine_writes_only_its_own_store(bare_repo: pygit2.Repository) -> None:
    put(bare_repo, b"a", ALICE)
    put(bare_repo, b"b", BOB)
    assert set(refs.tips(bare_repo, "refs/hive/bodies/")) == {refs.bodies_ref(ALICE.id), refs.bodies_ref(BOB.id)}
    bodies.delete(bare_repo, BOB.key, TEAM_ID, [h(b"a")])  # not Bob's to delete
    assert bodies.get(bare_repo, h(b"a")) == b"a"
