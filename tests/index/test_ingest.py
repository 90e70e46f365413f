"""The verified read-union: what a reader accepts from peers' refs, what it refuses, and what it keeps.

Bad data is built with ``gitive.store.logs`` and plain git in one machine's clone, pushed to a real remote,
and read on another machine through ``gitive sync`` / ``gitive log`` / ``gitive doctor``.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pygit2
import pytest

from gitive.constants import MAX_ENTRY_BYTES
from gitive.store import logs, refs
from testing import fixtures
from testing.machines import (
    Fleet,
    Machine,
    entry_commit,
    make_key,
    note,
    push_commit,
    signed_entry,
)


def _team_log(reader: Machine) -> list[tuple[str, int, str]]:
    """(author, seq, note name) of every verified entry in the ``team`` log, oldest first."""
    entries = reader.json("log", "--log", "team", "--limit", "1000")
    return sorted((e["author"], e["seq"], e["record"]["name"]) for e in entries)


def _problems(reader: Machine) -> list[dict[str, Any]]:
    result = reader.run("doctor", "--json")
    report = result.json()
    assert (result.code == 1) == bool(report["problems"]) and report["ok"] is not bool(report["problems"])
    return report["problems"]


def _kinds(reader: Machine) -> set[str]:
    return {p["kind"] for p in _problems(reader)}


def _bob_notes(bob: Machine, alice: Machine, n: int) -> list[logs.Entry]:
    written = [bob.append(note(i, alice.id)) for i in range(1, n + 1)]
    bob.ok("sync")
    return written


def test_peer_entries_are_read_after_sync(pair: tuple[Machine, Machine]) -> None:
    alice, bob = pair
    _bob_notes(bob, alice, 2)
    assert _team_log(alice) == []
    alice.ok("sync")
    assert _team_log(alice) == [(bob.id, 1, "note 1"), (bob.id, 2, "note 2")]
    assert _problems(alice) == []


def test_entry_by_a_non_member_in_a_members_log_is_refused(fleet: Fleet, pair: tuple[Machine, Machine],
                                                           bare_remote: Path) -> None:
    alice, bob = pair
    mallory = fleet.machine("evil", bare_remote)
    evil = make_key(mallory)
    forged = signed_entry(evil, alice.team_id, bob.id, 1, note("forged", alice.id))  # claims bob, signed by mallory
    push_commit(mallory, entry_commit(mallory.repo, forged, None), refs.log_ref(bob.id, "team"))
    alice.ok("sync")
    assert _team_log(alice) == []
    [problem] = [p for p in _problems(alice) if p["kind"] == "wrong-signer"]
    assert "team" in problem["where"] and problem["seq"] == 1


def test_entry_with_a_members_name_but_a_forged_signature_is_refused(
        fleet: Fleet, pair: tuple[Machine, Machine], bare_remote: Path) -> None:
    alice, bob = pair
    mallory = fleet.machine("evil", bare_remote)
    forged = signed_entry(make_key(mallory), alice.team_id, bob.id, 1, note("forged", alice.id))
    forged["by"] = bob.id  # now it names bob as signer, but the signature is mallory's
    push_commit(mallory, entry_commit(mallory.repo, forged, None), refs.log_ref(bob.id, "team"))
    alice.ok("sync")
    assert _team_log(alice) == []
    assert "bad-signature" in _kinds(alice)


def test_entry_signed_by_a_real_member_for_another_team_is_refused(pair: tuple[Machine, Machine]) -> None:
    alice, bob = pair
    replayed = signed_entry(bob.key, "0f" * 16, bob.id, 1, note("elsewhere", alice.id))  # bob's key, wrong team
    push_commit(bob, entry_commit(bob.repo, replayed, None), refs.log_ref(bob.id, "team"))
    alice.ok("sync")
    assert _team_log(alice) == []
    assert "bad-signature" in _kinds(alice)


def test_non_member_writing_its_own_log_is_ignored_and_reported(
        fleet: Fleet, pair: tuple[Machine, Machine], bare_remote: Path) -> None:
    alice, _ = pair
    mallory = fleet.machine("evil", bare_remote)
    key = make_key(mallory)
    mallory.git("config", "hive.team", alice.team_id)  # so Machine.append signs for alice's team
    mallory.append(note("spam", alice.id))
    mallory.append({"type": "member", "machine": mallory.id, "person": "mallory", "name": "evil",
                    "role": "member", "active": True, "emails": [], "ts": 1_000,
                    "admission": {"via": "founder"}}, log="roster")
    for log in ("team", "roster"):
        mallory.git("push", "--quiet", "origin", refs.log_ref(mallory.id, log))
    assert key.verify_key.encode().hex() == mallory.id
    alice.ok("sync")
    assert _team_log(alice) == []
    assert mallory.id not in {m["machine"] for m in alice.json("team")["members"]}
    problems = _problems(alice)
    assert {"unknown-signer", "roster-refused"} <= {p["kind"] for p in problems}
    # her roster log is read (admission lives there) and refused by the roster; her team log is refused by
    # its tip, never walked
    unknown = sorted((p for p in problems if p["kind"] == "unknown-signer"), key=lambda p: len(p["where"]))
    assert [len(unknown), mallory.id.startswith(unknown[0]["where"])] == [2, True]
    assert unknown[1]["where"].endswith(f"{mallory.id}/team")
    assert all(e["author"] != mallory.id for e in alice.json("log", "--limit", "1000"))


def test_oversized_entry_is_refused(pair: tuple[Machine, Machine]) -> None:
    alice, bob = pair
    [first] = _bob_notes(bob, alice, 1)
    alice.ok("sync")
    big = signed_entry(bob.key, bob.team_id, bob.id, 2, note("x" * MAX_ENTRY_BYTES, alice.id))
    push_commit(bob, entry_commit(bob.repo, big, first.commit), refs.log_ref(bob.id, "team"))
    alice.ok("sync")
    assert _team_log(alice) == [(bob.id, 1, "note 1")]
    [problem] = [p for p in _problems(alice) if p["kind"] == "malformed"]
    assert "cap" in problem["detail"]


def test_out_of_sequence_entry_is_refused(pair: tuple[Machine, Machine]) -> None:
    alice, bob = pair
    [first] = _bob_notes(bob, alice, 1)
    skipped = signed_entry(bob.key, bob.team_id, bob.id, 3, note(3, alice.id))  # seq 2 never written
    third = entry_commit(bob.repo, skipped, first.commit)
    after = entry_commit(bob.repo, signed_entry(bob.key, bob.team_id, bob.id, 4, note(4, alice.id)), third)
    push_commit(bob, after, refs.log_ref(bob.id, "team"))
    alice.ok("sync")
    assert _team_log(alice) == [(bob.id, 1, "note 1")]
    [problem] = [p for p in _problems(alice) if p["kind"] == "seq-gap"]
    assert problem["seq"] == 3


def test_equivocation_through_two_remotes_quarantines_both_entries(
        fleet: Fleet, pair: tuple[Machine, Machine], make_bare, tmp_path: Path) -> None:
    alice, bob = pair
    _bob_notes(bob, alice, 2)
    # a copy of bob's repository (and key) from before seq 3: the key is now on two machines
    twin = Machine("desk-copy", bob.home, tmp_path / "desk-copy")
    shutil.copytree(bob.clone, twin.clone)
    bob.append(note("3 from desk", alice.id))
    bob.ok("sync")
    twin.append(note("3 from the copy", alice.id))
    mirror = make_bare("mirror.git")
    twin.git("remote", "add", "mirror", str(mirror))
    twin.git("push", "--quiet", "mirror", refs.log_ref(bob.id, "team"))
    assert fixtures.ref_tips(mirror)[refs.log_ref(bob.id, "team")] != \
        fixtures.ref_tips(bob.clone)[refs.log_ref(bob.id, "team")]

    alice.git("remote", "add", "mirror", str(mirror))
    alice.git("config", "--add", "remote.mirror.fetch", "+refs/hive/*:refs/hive-remotes/mirror/*")
    alice.ok("sync")  # the refspec alone makes sync use the new remote too
    assert _team_log(alice) == [(bob.id, 1, "note 1"), (bob.id, 2, "note 2")]
    [problem] = [p for p in _problems(alice) if p["kind"] == "equivocation"]
    assert problem["seq"] == 3
    # the quarantine is rebuilt from the refs alone
    alice.ok("index", "rebuild")
    assert _team_log(alice) == [(bob.id, 1, "note 1"), (bob.id, 2, "note 2")]
    assert "equivocation" in _kinds(alice)


def test_equivocation_arriving_in_two_syncs_is_caught(
        pair: tuple[Machine, Machine], make_bare, tmp_path: Path) -> None:
    alice, bob = pair
    _bob_notes(bob, alice, 1)
    twin = Machine("desk-copy", bob.home, tmp_path / "desk-copy")
    shutil.copytree(bob.clone, twin.clone)
    bob.append(note("2 from desk", alice.id))
    bob.ok("sync")
    alice.ok("sync")
    assert _team_log(alice) == [(bob.id, 1, "note 1"), (bob.id, 2, "note 2 from desk")]
    twin.append(note("2 from the copy", alice.id))
    twin.append(note("3 from the copy", alice.id))
    mirror = make_bare("mirror.git")
    twin.git("remote", "add", "mirror", str(mirror))
    twin.git("push", "--quiet", "mirror", refs.log_ref(bob.id, "team"))
    alice.git("remote", "add", "mirror", str(mirror))
    alice.git("config", "--add", "remote.mirror.fetch", "+refs/hive/*:refs/hive-remotes/mirror/*")
    alice.ok("sync", "--remote", "mirror")
    assert _team_log(alice) == [(bob.id, 1, "note 1")]
    assert "equivocation" in _kinds(alice)


def test_rollback_keeps_what_was_verified(pair: tuple[Machine, Machine], bare_remote: Path) -> None:
    alice, bob = pair
    written = _bob_notes(bob, alice, 5)
    alice.ok("sync")
    full = [(bob.id, i, f"note {i}") for i in range(1, 6)]
    assert _team_log(alice) == full
    ref = refs.log_ref(bob.id, "team")
    push_commit(bob, written[2].commit, ref, force=True)  # the remote now serves seq 1..3 only
    assert fixtures.ref_tips(bare_remote)[ref] == written[2].commit

    alice.ok("sync")
    assert fixtures.ref_tips(alice.clone)[f"refs/hive-remotes/origin/logs/{bob.id}/team"] == written[2].commit
    assert _team_log(alice) == full
    [problem] = [p for p in _problems(alice) if p["kind"] == "rollback"]
    assert problem["seq"] == 3
    assert fixtures.ref_tips(alice.clone)[refs.pinned_ref(bob.id, "team")] == written[4].commit
    before = alice.json("log", "--limit", "1000")
    alice.ok("index", "rebuild")
    assert _team_log(alice) == full
    assert alice.json("log", "--limit", "1000") == before


def test_a_plain_git_fetch_is_noticed_by_the_next_read(pair: tuple[Machine, Machine]) -> None:
    alice, bob = pair
    _bob_notes(bob, alice, 1)
    assert _team_log(alice) == []
    alice.git("fetch", "--quiet", "origin")  # by hand: no gitive involved
    assert _team_log(alice) == [(bob.id, 1, "note 1")]
    bob.append(note(2, alice.id))
    bob.ok("sync")
    alice.git("fetch", "--quiet", "origin")
    assert _team_log(alice) == [(bob.id, 1, "note 1"), (bob.id, 2, "note 2")]


def test_a_read_with_nothing_new_reads_no_ref(pair: tuple[Machine, Machine],
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from gitive.index.refresh import fresh_index
    from gitive.team.hive import open_hive

    alice, bob = pair
    _bob_notes(bob, alice, 1)
    alice.git("fetch", "--quiet", "origin")
    monkeypatch.setenv("GITIVE_HOME", str(alice.home))
    hive = open_hive(alice.clone)
    with fresh_index(hive) as (_, report):
        assert report.received == 1
    with fresh_index(hive) as (_, report):  # may look once at the pin the first read made
        assert report.received == 0 and report.refs_read <= 1
    with fresh_index(hive) as (_, report):
        assert report.refs_read == 0 and report.received == 0


def test_index_rebuild_reproduces_the_log(fleet: Fleet, bare_remote: Path) -> None:
    alice, bob, carol = fleet.team(bare_remote, ("alice", "laptop"), ("bob", "desk"), ("carol", "box"))
    _bob_notes(bob, alice, 3)
    carol.append(note("c", alice.id))
    carol.ok("sync")
    alice.decided("team", "remove", "carol")
    alice.ok("sync")
    log, team = alice.json("log", "--limit", "1000"), alice.json("team")
    assert {e["author"] for e in log} == {alice.id, bob.id, carol.id}
    index = alice.clone / ".git" / "gitive" / "index.sqlite"
    assert index.exists()
    rebuilt = alice.json("index", "rebuild")
    assert rebuilt["entries"] >= len(log) and rebuilt["problems"] == 0
    assert alice.json("log", "--limit", "1000") == log
    assert alice.json("team") == team
    index.unlink()  # a deleted index (no rebuild command) comes back the same on the next read
    for suffix in ("-wal", "-shm"):
        index.with_name(index.name + suffix).unlink(missing_ok=True)
    assert alice.json("log", "--limit", "1000") == log


def test_removed_machines_later_entries_are_not_verified(fleet: Fleet, bare_remote: Path) -> None:
    alice, bob, carol = fleet.team(bare_remote, ("alice", "laptop"), ("bob", "desk"), ("carol", "box"))
    _bob_notes(bob, alice, 1)
    alice.ok("sync")
    alice.decided("team", "remove", "bob/desk")
    removed_at = {m["machine"]: m["ts"] for m in alice.json("team")["members"]}[bob.id]
    bob.append(note("after removal", alice.id), at=removed_at + 1)  # bob has not heard yet
    bob.ok("sync")
    for reader in (carol, alice):
        reader.ok("sync")
        assert _team_log(reader) == [(bob.id, 1, "note 1")]
    # bob's signed departure is itself a verified roster entry by alice
    departures = [e for e in carol.json("log", "--log", "roster", "--kind", "member")
                  if e["record"]["machine"] == bob.id and not e["record"]["active"]]
    assert [d["author"] for d in departures] == [alice.id]


def test_removed_machine_cannot_readmit_itself(fleet: Fleet, bare_remote: Path) -> None:
    alice, bob = fleet.team(bare_remote, ("alice", "laptop"), ("bob", "desk"))
    alice.decided("team", "remove", "bob")
    bob.ok("sync")
    last = refs.tip(bob.repo, refs.log_ref(bob.id, "roster"))
    assert last is not None
    bob.append({"type": "member", "machine": bob.id, "person": "bob", "name": "desk", "role": "member",
                "active": True, "emails": [], "ts": 10**13}, log="roster")  # "I am back"
    bob.ok("sync")
    alice.ok("sync")
    assert {m["machine"]: m["active"] for m in alice.json("team")["members"]}[bob.id] is False
    assert "roster-refused" in _kinds(alice)


def test_own_unpushed_entries_survive_a_fetch(pair: tuple[Machine, Machine]) -> None:
    alice, bob = pair
    mine = alice.append(note("local only", alice.id))
    bob.append(note("b", alice.id))
    bob.ok("sync")
    alice.ok("sync", "--no-push")
    assert refs.tip(alice.repo, refs.log_ref(alice.id, "team")) == mine.commit
    assert sorted(_team_log(alice)) == sorted([(alice.id, 1, "note local only"), (bob.id, 1, "note b")])
    assert isinstance(alice.repo[mine.commit], pygit2.Commit)
