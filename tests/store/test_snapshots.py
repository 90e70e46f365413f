"""Signed, versioned snapshot commits for the rewritable refs (docs/verification.md §5)."""

from __future__ import annotations

import pygit2
import pytest

from gitive.errors import InvalidRecord
from gitive.store import refs, snapshots
from gitive.store.snapshots import FANOUT, FLAT, Snapshot
from testing.bodies import rewrap, v1_snapshot
from testing.builders import OTHER_TEAM_ID, TEAM_ID, machine

A = machine("a")
B = machine("b")


def _tree(repo: pygit2.Repository, content: bytes = b"x") -> pygit2.Oid:
    builder = repo.TreeBuilder()
    builder.insert("file", repo.create_blob(content), pygit2.enums.FileMode.BLOB)
    return builder.write()


def _write(repo: pygit2.Repository, kind: str = "bodies", version: int = 1, content: bytes = b"x",
           who=A) -> str:
    return snapshots.write(repo, who.key, TEAM_ID, kind, _tree(repo, content), f"{kind} of a", version)


def test_write_makes_a_commit_with_version_layout_and_signature(bare_repo: pygit2.Repository,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITIVE_NOW_MS", "1700000000000")
    tree = _tree(bare_repo)
    oid = snapshots.write(bare_repo, A.key, TEAM_ID, "bodies", tree, "bodies of a", 7)
    commit = bare_repo[oid]
    assert commit.parent_ids == [] and commit.tree_id == tree
    lines = commit.message.splitlines()
    assert lines[:4] == ["bodies of a", "", "Hive-Version: 7", "Hive-Layout: fanout-2"]
    assert lines[4].startswith(snapshots.TRAILER) and len(lines) == 5
    assert commit.author.email == f"{A.id}@hive" and commit.author.time == 1_700_000_000
    assert snapshots.write(bare_repo, A.key, TEAM_ID, "bodies", str(tree), "bodies of a", 7) == oid
    assert snapshots.check(bare_repo, TEAM_ID, "bodies", A.id, oid) == Snapshot(oid, str(tree), A.id, "bodies", 7,
                                                                               FANOUT)


def test_presence_has_a_version_and_no_layout(bare_repo: pygit2.Repository) -> None:
    oid = _write(bare_repo, "presence", 3)
    assert "Hive-Layout" not in bare_repo[oid].message
    assert snapshots.check(bare_repo, TEAM_ID, "presence", A.id, oid).version == 3
    assert snapshots.check(bare_repo, TEAM_ID, "presence", A.id, oid).layout == ""


@pytest.mark.parametrize("version", [0, -1, snapshots.MAX_VERSION])
def test_write_refuses_a_version_readers_would_not_accept(bare_repo: pygit2.Repository, version: int) -> None:
    with pytest.raises(InvalidRecord, match="version"):
        _write(bare_repo, version=version)


def test_signature_binds_team_kind_machine_and_version(bare_repo: pygit2.Repository) -> None:
    oid = _write(bare_repo, version=2)
    assert snapshots.signature_ok(bare_repo, TEAM_ID, "bodies", A.id, oid)
    assert not snapshots.signature_ok(bare_repo, OTHER_TEAM_ID, "bodies", A.id, oid)
    assert not snapshots.signature_ok(bare_repo, TEAM_ID, "presence", A.id, oid)
    assert not snapshots.signature_ok(bare_repo, TEAM_ID, "bodies", B.id, oid)
    bumped = rewrap(bare_repo, oid, bare_repo[oid].message.replace("Hive-Version: 2", "Hive-Version: 9"))
    with pytest.raises(InvalidRecord, match="not a bodies snapshot signed by"):
        snapshots.check(bare_repo, TEAM_ID, "bodies", A.id, bumped)
    dropped = rewrap(bare_repo, oid, bare_repo[oid].message.replace("Hive-Version: 2\n", ""))
    with pytest.raises(InvalidRecord):  # now claims to be v1 with a fan-out layout trailer
        snapshots.check(bare_repo, TEAM_ID, "bodies", A.id, dropped)


def test_a_signature_moved_onto_another_tree_is_refused(bare_repo: pygit2.Repository) -> None:
    original = _write(bare_repo)
    moved = rewrap(bare_repo, original, tree=_tree(bare_repo, b"other"))
    assert not snapshots.signature_ok(bare_repo, TEAM_ID, "bodies", A.id, moved)


def test_rewrapping_the_same_signed_tree_and_version_still_verifies(bare_repo: pygit2.Repository) -> None:
    # The signature covers tree, machine and version, not the commit's other bytes: a copy is the same
    # snapshot to a reader (same tree, same version), so refusal() treats it as not newer.
    original = _write(bare_repo, version=4)
    copy = rewrap(bare_repo, original, bare_repo[original].message.replace("bodies of a", "anything"))
    first = snapshots.check(bare_repo, TEAM_ID, "bodies", A.id, original)
    second = snapshots.check(bare_repo, TEAM_ID, "bodies", A.id, copy)
    assert (second.tree, second.version) == (first.tree, first.version)
    assert snapshots.refusal(first, second) is not None


def test_non_snapshots_are_refused(bare_repo: pygit2.Repository) -> None:
    parent = _write(bare_repo)
    twins = rewrap(bare_repo, parent, parents=[parent, _write(bare_repo, version=2, content=b"y")])
    unsigned = rewrap(bare_repo, parent, "no trailer\n")
    tree = str(_tree(bare_repo))
    for oid, why in [(twins, "at most one parent"), (unsigned, "unsigned"), (tree, "is a commit"),
                     ("0" * 40, "not in"), ("nonsense", "not in")]:
        with pytest.raises(InvalidRecord, match=why):
            snapshots.check(bare_repo, TEAM_ID, "bodies", A.id, oid)
        assert snapshots.read(bare_repo, TEAM_ID, "bodies", A.id, oid) is None


def test_a_body_snapshot_may_have_one_parent_a_presence_snapshot_none(bare_repo: pygit2.Repository) -> None:
    first = _write(bare_repo)
    second = snapshots.write(bare_repo, A.key, TEAM_ID, "bodies", _tree(bare_repo, b"2"), "b", 2, first)
    assert bare_repo[second].parent_ids == [pygit2.Oid(hex=first)]
    assert snapshots.check(bare_repo, TEAM_ID, "bodies", A.id, second).version == 2
    presence = _write(bare_repo, "presence")
    with pytest.raises(InvalidRecord, match="no parent"):
        snapshots.write(bare_repo, A.key, TEAM_ID, "presence", _tree(bare_repo), "p", 2, presence)
    child = rewrap(bare_repo, presence, parents=[presence])
    with pytest.raises(InvalidRecord, match="presence snapshot is parentless"):
        snapshots.check(bare_repo, TEAM_ID, "presence", A.id, child)


@pytest.mark.parametrize("trailers", [
    "Hive-Version: 01\nHive-Layout: fanout-2\n",
    "Hive-Version: 0\nHive-Layout: fanout-2\n",
    "Hive-Version: -3\nHive-Layout: fanout-2\n",
    "Hive-Version: 1e3\nHive-Layout: fanout-2\n",
    "Hive-Version: 99999999999999999999\nHive-Layout: fanout-2\n",
    "Hive-Version: 1\n",
    "Hive-Version: 1\nHive-Layout: flat\n",
    "Hive-Version: 1\nHive-Layout: fanout-2\nHive-Layout: fanout-2\n",
    "Hive-Version: 1\nHive-Version: 2\nHive-Layout: fanout-2\n",
    "Hive-Version: 1\nHive-Layout: fanout-2\nHive-Extra: 1\n",
    "Hive-Layout: fanout-2\n",
])
def test_malformed_trailers_are_refused(bare_repo: pygit2.Repository, trailers: str) -> None:
    good = bare_repo[_write(bare_repo)]
    sig = next(ln for ln in good.message.splitlines() if ln.startswith(snapshots.TRAILER))
    forged = rewrap(bare_repo, str(good.id), f"bodies of a\n\n{trailers}{sig}\n")
    with pytest.raises(InvalidRecord):
        snapshots.check(bare_repo, TEAM_ID, "bodies", A.id, forged)


def test_a_v1_snapshot_reads_as_version_zero_flat(bare_repo: pygit2.Repository) -> None:
    bodies_v1 = v1_snapshot(bare_repo, A.key, TEAM_ID, "bodies", _tree(bare_repo))
    presence_v1 = v1_snapshot(bare_repo, A.key, TEAM_ID, "presence", _tree(bare_repo))
    assert snapshots.check(bare_repo, TEAM_ID, "bodies", A.id, bodies_v1)[4:] == (0, FLAT)
    assert snapshots.check(bare_repo, TEAM_ID, "presence", A.id, presence_v1)[4:] == (0, "")
    assert not snapshots.signature_ok(bare_repo, TEAM_ID, "presence", A.id, bodies_v1)


def _snap(version: int, commit: str = "c") -> Snapshot:
    return Snapshot(commit + str(version), "t", A.id, "bodies", version, FANOUT if version else FLAT)


@pytest.mark.parametrize(("accepted", "candidate", "ok"), [
    (None, 0, True), (None, 1, True), (None, 5, True),
    (0, 0, True),  # an old client still writing v1 replaces its v1 store
    (0, 1, True), (1, 2, True), (4, 9, True),
    (1, 0, False), (3, 0, False),  # no v1 once a versioned snapshot was accepted
    (3, 3, False), (3, 2, False),  # versions only go up
])
def test_refusal_rules(accepted: int | None, candidate: int, ok: bool) -> None:
    old = _snap(accepted, "old") if accepted is not None else None
    assert (snapshots.refusal(old, _snap(candidate, "new")) is None) is ok


def test_the_same_commit_is_never_refused() -> None:
    assert snapshots.refusal(_snap(3), _snap(3)) is None


def test_own_copies_and_next_version(tmp_path, bare_repo: pygit2.Repository) -> None:
    local, tracked = snapshots.own_copies(bare_repo, TEAM_ID, "bodies", A.id)
    assert (local, tracked, snapshots.next_version(local, tracked)) == (None, [], 1)
    mine = _write(bare_repo, version=2)
    refs.force_set(bare_repo, refs.bodies_ref(A.id), mine, "t")
    bare_repo.remotes.create("origin", str(tmp_path / "nowhere.git"))
    theirs = _write(bare_repo, version=6, content=b"other clone")
    refs.force_set(bare_repo, f"refs/hive-remotes/origin/bodies/{A.id}", theirs, "t")
    bare_repo.references.create(f"refs/hive-remotes/elsewhere/bodies/{A.id}", theirs)  # not a remote: ignored
    local, tracked = snapshots.own_copies(bare_repo, TEAM_ID, "bodies", A.id)
    assert local.commit == mine and [t.commit for t in tracked] == [theirs]
    assert snapshots.next_version(local, tracked) == 7
