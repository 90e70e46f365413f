"""The body store: one signed, versioned, fanned-out snapshot per machine, rewritten on delete."""

from __future__ import annotations

import threading
from pathlib import Path

import pygit2
import pytest

from gitive.core.ids import blake3_hex
from gitive.errors import InvalidRecord
from gitive.store import bodies, refs, snapshots
from gitive.store.snapshots import FANOUT, FLAT
from testing import fixtures
from testing.bodies import flat_tree, v1_snapshot, v1_store
from testing.builders import TEAM_ID, machine
from testing.fixtures import run_git

ALICE = machine("alice")
BOB = machine("bob")
_TREE = pygit2.enums.FileMode.TREE
_BLOB = pygit2.enums.FileMode.BLOB


def h(data: bytes) -> str:
    return blake3_hex(data)


def put(repo: pygit2.Repository, data: bytes, who=ALICE) -> bool:
    return bodies.put(repo, who.key, TEAM_ID, h(data), data)


def snap(repo: pygit2.Repository, who=ALICE) -> snapshots.Snapshot:
    return snapshots.check(repo, TEAM_ID, "bodies", who.id, refs.tip(repo, refs.bodies_ref(who.id)))


def test_put_then_get(bare_repo: pygit2.Repository) -> None:
    assert put(bare_repo, b"first body")
    assert bodies.get(bare_repo, ALICE.id, h(b"first body")) == b"first body"
    assert bodies.has(bare_repo, ALICE.id, h(b"first body"))
    assert bodies.get(bare_repo, ALICE.id, h(b"never stored")) is None
    assert bodies.get(bare_repo, BOB.id, h(b"first body")) is None  # only Alice's store holds it


def test_put_twice_is_a_no_op(bare_repo: pygit2.Repository) -> None:
    assert put(bare_repo, b"body")
    tip = refs.tip(bare_repo, refs.bodies_ref(ALICE.id))
    assert not put(bare_repo, b"body")
    assert refs.tip(bare_repo, refs.bodies_ref(ALICE.id)) == tip


def test_bodies_fan_out_under_two_hash_prefix_folders(bare_repo: pygit2.Repository) -> None:
    put(bare_repo, b"one")
    digest = h(b"one")
    tree = bare_repo[snap(bare_repo).tree]
    assert [e.name for e in tree] == [digest[:2]] and tree[digest[:2]].filemode == _TREE
    leaf = tree[digest[:2]][digest[2:4]]
    assert [e.name for e in leaf] == [digest] and leaf[digest].filemode == _BLOB
    assert snap(bare_repo).layout == FANOUT


def test_every_write_is_one_signed_snapshot_one_version_up(bare_repo: pygit2.Repository) -> None:
    versions, tips = [], []
    for data in (b"a", b"b", b"c"):
        put(bare_repo, data)
        versions.append(snap(bare_repo).version)
        tips.append(snap(bare_repo).commit)
    bodies.delete(bare_repo, ALICE.key, TEAM_ID, [h(b"a")])
    versions.append(snap(bare_repo).version)
    assert versions == [1, 2, 3, 4]
    # a put builds on the previous snapshot (so a push sends only what it added); a delete starts afresh
    assert [bare_repo[t].parent_ids for t in tips] == [[], [pygit2.Oid(hex=tips[0])], [pygit2.Oid(hex=tips[1])]]
    assert bare_repo[snap(bare_repo).commit].parent_ids == []


def test_a_push_after_a_put_sends_only_what_the_put_added(tmp_path: Path) -> None:
    remote = fixtures.init_bare(tmp_path / "remote.git")
    peer = fixtures.init_bare(tmp_path / "peer.git")
    mine = pygit2.Repository(str(fixtures.init_bare(tmp_path / "mine.git")))
    name = refs.bodies_ref(ALICE.id)
    for i in range(300):
        put(mine, f"body {i}".encode())
    run_git(["push", "--quiet", str(remote), f"+{name}:{name}"], cwd=mine.path)
    run_git(["fetch", "--quiet", str(remote), f"+{name}:{name}"], cwd=peer)
    put(mine, b"one more")
    run_git(["push", "--quiet", str(remote), f"+{name}:{name}"], cwd=mine.path)
    counted = run_git(["rev-list", "--objects", name, f"^{refs.tip(mine, name)}~1"], cwd=mine.path)
    assert len(counted.splitlines()) == 5  # commit, root, folder, leaf, blob
    run_git(["fetch", "--quiet", str(remote), f"+{name}:{name}"], cwd=peer)
    # git unpacks a fetch of fewer than 100 objects: five loose objects, not a pack of the whole store
    assert "count: 5\n" in run_git(["count-objects", "-v"], cwd=peer)


def test_a_put_rewrites_only_the_trees_on_its_path(bare_repo: pygit2.Repository) -> None:
    many = [f"body {i}".encode() for i in range(600)]
    bodies_by_prefix = {h(d)[:2] for d in many}
    for data in many[:300]:
        put(bare_repo, data)
    before = snap(bare_repo)
    put(bare_repo, many[300])
    after = snap(bare_repo)
    old_root, new_root = bare_repo[before.tree], bare_repo[after.tree]
    changed = [e.name for e in new_root if e.name not in old_root or old_root[e.name].id != e.id]
    assert changed == [h(many[300])[:2]]
    assert bodies.changes(bare_repo, before, after) == ({h(many[300]): str(bare_repo.create_blob(many[300]))}, set())
    assert len(bodies_by_prefix) > 100  # the sample really spreads over many folders


def test_changes_skip_unchanged_subtrees_by_id(bare_repo: pygit2.Repository, monkeypatch: pytest.MonkeyPatch) -> None:
    for i in range(400):
        put(bare_repo, f"body {i}".encode())
    before = snap(bare_repo)
    put(bare_repo, b"new")
    bodies.delete(bare_repo, ALICE.key, TEAM_ID, [h(b"body 7")])
    after = snap(bare_repo)
    leaves: list[str] = []
    real = bodies._leaf_entries
    monkeypatch.setattr(bodies, "_leaf_entries",
                        lambda repo, tree, prefix: (leaves.append(prefix), real(repo, tree, prefix))[1])
    added, removed = bodies.changes(bare_repo, before, after)
    assert set(added) == {h(b"new")} and removed == {h(b"body 7")}
    assert len(leaves) <= 4  # two leaves changed, each read on both sides: nothing else was listed


def test_delete_rewrites_and_removes_emptied_folders(bare_repo: pygit2.Repository) -> None:
    for data in (b"keep", b"retract-1", b"retract-2"):
        put(bare_repo, data)
    assert bodies.delete(bare_repo, ALICE.key, TEAM_ID, [h(b"retract-1"), h(b"retract-2")])
    found = snap(bare_repo)
    assert bodies.hashes(bare_repo, ALICE.id) == [h(b"keep")]
    assert [e.name for e in bare_repo[found.tree]] == [h(b"keep")[:2]]
    assert bodies.get(bare_repo, ALICE.id, h(b"retract-1")) is None


def test_equal_contents_give_equal_trees(bare_repo: pygit2.Repository, tmp_path: Path) -> None:
    other = pygit2.Repository(str(fixtures.init_bare(tmp_path / "other.git")))
    for data in (b"x", b"y", b"z"):
        put(bare_repo, data)
    bodies.delete(bare_repo, ALICE.key, TEAM_ID, [h(b"z")])
    for data in (b"y", b"x"):
        put(other, data)
    assert snap(bare_repo).tree == snap(other).tree


def test_delete_of_absent_bodies_changes_nothing(bare_repo: pygit2.Repository) -> None:
    assert not bodies.delete(bare_repo, ALICE.key, TEAM_ID, [h(b"nothing")])  # no store yet
    put(bare_repo, b"x")
    tip = refs.tip(bare_repo, refs.bodies_ref(ALICE.id))
    assert not bodies.delete(bare_repo, ALICE.key, TEAM_ID, [h(b"nothing")])
    assert refs.tip(bare_repo, refs.bodies_ref(ALICE.id)) == tip


def test_delete_everything_leaves_an_empty_signed_snapshot(bare_repo: pygit2.Repository) -> None:
    put(bare_repo, b"only")
    assert bodies.delete(bare_repo, ALICE.key, TEAM_ID, [h(b"only")])
    assert len(bare_repo[snap(bare_repo).tree]) == 0
    assert bodies.hashes(bare_repo, ALICE.id) == []


def test_deleted_body_is_gone_from_history_of_the_ref(bare_repo: pygit2.Repository) -> None:
    put(bare_repo, b"secret")
    bodies.delete(bare_repo, ALICE.key, TEAM_ID, [h(b"secret")])
    listed = run_git(["rev-list", "--objects", refs.bodies_ref(ALICE.id)], cwd=bare_repo.path)
    assert str(bare_repo.create_blob(b"secret")) not in listed


@pytest.mark.parametrize("bad", ["", "ab", "AB" * 32, "zz" * 32, "ab" * 33, "../" + "a" * 61])
def test_bad_hashes_are_refused(bare_repo: pygit2.Repository, bad: str) -> None:
    with pytest.raises(InvalidRecord, match="body hash"):
        bodies.put(bare_repo, ALICE.key, TEAM_ID, bad, b"x")
    with pytest.raises(InvalidRecord, match="body hash"):
        bodies.get(bare_repo, ALICE.id, bad)
    with pytest.raises(InvalidRecord, match="body hash"):
        bodies.delete(bare_repo, ALICE.key, TEAM_ID, [h(b"ok"), bad])
    assert refs.tips(bare_repo, "refs/") == {}


def test_a_machine_writes_only_its_own_store(bare_repo: pygit2.Repository) -> None:
    put(bare_repo, b"a", ALICE)
    put(bare_repo, b"b", BOB)
    assert set(refs.tips(bare_repo, "refs/hive/bodies/")) == {refs.bodies_ref(ALICE.id), refs.bodies_ref(BOB.id)}
    bodies.delete(bare_repo, BOB.key, TEAM_ID, [h(b"a")])  # not Bob's to delete
    assert bodies.get(bare_repo, ALICE.id, h(b"a")) == b"a"


# ---- the v1 (flat, unversioned) store: old data reads, and the first write migrates it -------------------

def test_a_v1_store_reads_and_lists(bare_repo: pygit2.Repository) -> None:
    old = {h(d): d for d in (b"old one", b"old two")}
    v1_store(bare_repo, ALICE.key, TEAM_ID, old)
    assert snap(bare_repo).layout == FLAT and snap(bare_repo).version == 0
    assert bodies.hashes(bare_repo, ALICE.id) == sorted(old)
    assert all(bodies.get(bare_repo, ALICE.id, k) == v for k, v in old.items())


def test_the_first_write_to_a_v1_store_migrates_it_to_fan_out(bare_repo: pygit2.Repository) -> None:
    old = {h(f"old {i}".encode()): f"old {i}".encode() for i in range(50)}
    v1_store(bare_repo, ALICE.key, TEAM_ID, old)
    assert put(bare_repo, b"new")
    found = snap(bare_repo)
    assert (found.version, found.layout) == (1, FANOUT)
    assert bodies.hashes(bare_repo, ALICE.id) == sorted([*old, h(b"new")])
    assert all(bodies.get(bare_repo, ALICE.id, k) == v for k, v in old.items())
    assert all(len(e.name) == 2 for e in bare_repo[found.tree])


def test_a_delete_from_a_v1_store_migrates_too(bare_repo: pygit2.Repository) -> None:
    v1_store(bare_repo, ALICE.key, TEAM_ID, {h(b"a"): b"a", h(b"b"): b"b"})
    assert bodies.delete(bare_repo, ALICE.key, TEAM_ID, [h(b"a")])
    assert (snap(bare_repo).layout, bodies.hashes(bare_repo, ALICE.id)) == (FANOUT, [h(b"b")])


def test_entries_skip_misplaced_and_wrong_typed_items(bare_repo: pygit2.Repository) -> None:
    good, other = h(b"good"), h(b"other")
    blob = bare_repo.create_blob(b"good")
    leaf = bare_repo.TreeBuilder()
    leaf.insert(good, blob, _BLOB)
    leaf.insert(other, blob, _BLOB)  # misplaced: its prefix is not this folder's
    leaf.insert("README", blob, _BLOB)
    mid = bare_repo.TreeBuilder()
    mid.insert(good[2:4], leaf.write(), _TREE)
    root = bare_repo.TreeBuilder()
    root.insert(good[:2], mid.write(), _TREE)
    root.insert(other, blob, _BLOB)  # a flat entry inside a fan-out tree
    tree = str(root.write())
    assert list(bodies.entries(bare_repo, tree, FANOUT)) == [(good, str(blob))]
    assert bodies.locate(bare_repo, tree, FANOUT, other) is None
    assert list(bodies.entries(bare_repo, str(flat_tree(bare_repo, {good: b"good"})), FLAT)) == [(good, str(blob))]


# ---- copies of this machine's store on a remote (another clone with the same key) --------------------------

def _clone_pair(tmp_path: Path) -> tuple[pygit2.Repository, pygit2.Repository, Path]:
    remote = fixtures.init_bare(tmp_path / "remote.git")
    one = pygit2.Repository(str(fixtures.init_bare(tmp_path / "one.git")))
    two = pygit2.Repository(str(fixtures.init_bare(tmp_path / "two.git")))
    for repo in (one, two):
        repo.remotes.create("origin", str(remote))
    return one, two, remote


def _push(repo: pygit2.Repository) -> None:
    name = refs.bodies_ref(ALICE.id)
    run_git(["push", "--quiet", "origin", f"+{name}:{name}"], cwd=repo.path)


def _fetch(repo: pygit2.Repository) -> None:
    run_git(["fetch", "--quiet", "origin", "+refs/hive/*:refs/hive-remotes/origin/*"], cwd=repo.path)


def test_a_write_goes_above_and_keeps_a_newer_copy_on_the_remote(tmp_path: Path) -> None:
    one, two, _ = _clone_pair(tmp_path)
    for data in (b"from one a", b"from one b", b"from one c"):
        put(one, data)
    _push(one)
    put(two, b"from two")  # two has not fetched yet: its store is version 1
    _fetch(two)
    put(two, b"from two, later")
    found = snap(two)
    assert found.version == 4  # above the remote's version 3
    assert bodies.hashes(two, ALICE.id) == sorted(h(d) for d in (b"from one a", b"from one b", b"from one c",
                                                                 b"from two", b"from two, later"))


def test_a_fresh_clone_builds_on_the_remote_copy_instead_of_erasing_it(tmp_path: Path) -> None:
    one, two, _ = _clone_pair(tmp_path)
    put(one, b"kept")
    _push(one)
    _fetch(two)
    put(two, b"added")
    assert bodies.hashes(two, ALICE.id) == sorted([h(b"kept"), h(b"added")])


def test_reconcile_writes_only_when_a_remote_copy_is_newer(tmp_path: Path) -> None:
    one, two, _ = _clone_pair(tmp_path)
    assert not bodies.reconcile(one, ALICE.key, TEAM_ID)
    put(one, b"a")
    assert not bodies.reconcile(one, ALICE.key, TEAM_ID)
    put(one, b"b")
    _push(one)
    put(two, b"c")
    _fetch(two)
    assert bodies.reconcile(two, ALICE.key, TEAM_ID)
    assert snap(two).version == 3 and bodies.hashes(two, ALICE.id) == sorted(h(d) for d in (b"a", b"b", b"c"))
    assert not bodies.reconcile(two, ALICE.key, TEAM_ID)


def test_concurrent_writers_both_land(bare_repo: pygit2.Repository) -> None:
    path = bare_repo.path
    errors: list[BaseException] = []

    def writer(tag: str) -> None:
        repo = pygit2.Repository(path)  # a Repository object is not shared across threads
        try:
            for i in range(15):
                put(repo, f"{tag} {i}".encode())
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(t,)) for t in ("x", "y")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(bodies.hashes(bare_repo, ALICE.id)) == 30
    assert snap(bare_repo).version == 30


# ---- shape checks for the guard -------------------------------------------------------------------------------

def _snapshot_of(repo: pygit2.Repository, tree: pygit2.Oid, version: int = 1) -> snapshots.Snapshot:
    commit = snapshots.write(repo, ALICE.key, TEAM_ID, "bodies", tree, "t", version)
    return snapshots.check(repo, TEAM_ID, "bodies", ALICE.id, commit)


def test_shape_problem_accepts_what_put_writes(bare_repo: pygit2.Repository) -> None:
    put(bare_repo, b"one")
    first = snap(bare_repo)
    put(bare_repo, b"two")
    assert bodies.shape_problem(bare_repo, None, snap(bare_repo)) is None
    assert bodies.shape_problem(bare_repo, first, snap(bare_repo)) is None
    v1 = v1_snapshot(bare_repo, ALICE.key, TEAM_ID, "bodies", flat_tree(bare_repo, {h(b"a"): b"a"}))
    assert bodies.shape_problem(bare_repo, None, snapshots.check(bare_repo, TEAM_ID, "bodies", ALICE.id, v1)) is None


@pytest.mark.parametrize("case", ["file-at-root", "bad-folder", "misplaced", "oversized", "folder-in-leaf"])
def test_shape_problem_refuses_malformed_trees(bare_repo: pygit2.Repository, case: str) -> None:
    digest = h(b"x")
    blob = bare_repo.create_blob(b"x" * (70_000 if case == "oversized" else 1))
    leaf = bare_repo.TreeBuilder()
    leaf.insert(h(b"elsewhere") if case == "misplaced" else digest, blob, _BLOB)
    if case == "folder-in-leaf":
        leaf.insert("ab", bare_repo.TreeBuilder().write(), _TREE)
    mid = bare_repo.TreeBuilder()
    mid.insert(digest[2:4], leaf.write(), _TREE)
    root = bare_repo.TreeBuilder()
    root.insert("zz" if case == "bad-folder" else digest[:2], mid.write(), _TREE)
    if case == "file-at-root":
        root.insert(digest, blob, _BLOB)
    why = bodies.shape_problem(bare_repo, None, _snapshot_of(bare_repo, root.write()))
    assert why and why.startswith("malformed body store")
