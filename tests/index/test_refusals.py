"""Refusals cached by tip, equivocation by entry hash, and junk stacked on an honest member's remote ref
(docs/verification.md §2), each pushed to a real remote and read by another machine through gitive itself."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from gitive.index import db, ingest, queries
from gitive.store import logs, refs, verify
from gitive.team.hive import open_hive
from testing import fixtures, hostile
from testing.machines import Fleet, Machine, make_key, note, push_commit, signed_entry


def _ingest(machine: Machine, monkeypatch: pytest.MonkeyPatch) -> ingest.Report:
    monkeypatch.setenv("GITIVE_HOME", str(machine.home))
    hive = open_hive(machine.clone)
    with db.connect(hive.index_path) as conn:
        return ingest.ingest(conn, hive.stores(), hive.team_id, hive.founder, hive.me)


def _problems(machine: Machine) -> list[dict[str, Any]]:
    return machine.run("doctor", "--json").json()["problems"]


def _walks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record the ref of every chain walk ingest starts (a spy around the real verifier)."""
    seen: list[str] = []
    real = verify.verify_chain

    def spy(repo: Any, team_id: str, ref: str, *args: Any, **kw: Any) -> Any:
        seen.append(ref)
        return real(repo, team_id, ref, *args, **kw)

    monkeypatch.setattr(verify, "verify_chain", spy)
    return seen


def test_a_junk_chain_costs_its_walk_once_then_one_comparison(pair: tuple[Machine, Machine],
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    alice, bob = pair
    ref = refs.log_ref(bob.id, "project")  # a member's log nobody wrote: 10,000 commits on a malformed root
    hostile.junk_chain(bob.clone, ref, 10_000)
    bob.git("push", "--quiet", "origin", ref)
    alice.ok("sync")
    walks = _walks(monkeypatch)
    assert _ingest(alice, monkeypatch).refs_read == 0 and walks == []  # refused by its tip: no walk
    [problem] = [p for p in _problems(alice) if p["kind"] == "malformed"]
    assert "project" in problem["where"]
    monkeypatch.undo()
    # one more junk commit on top: the walk stops at the tip refused before, the problem stands
    old = fixtures.ref_tips(bob.clone)[ref]
    bob.git("update-ref", ref, bob.git("commit-tree", f"{old}^{{tree}}", "-p", old, "-m", "more").strip())
    bob.git("push", "--quiet", "origin", ref)
    alice.ok("sync")
    assert alice.json("log", "--log", "project") == []
    assert [p["detail"] for p in _problems(alice) if p["kind"] == "malformed"] == [problem["detail"]]


def test_a_log_of_a_machine_not_on_the_roster_is_refused_by_tip_then_read_once_admitted(
        fleet: Fleet, pair: tuple[Machine, Machine], bare_remote: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    alice, _ = pair
    carol = fleet.machine("carol", bare_remote)
    key = make_key(carol)
    for i in range(3):  # carol signs her own log before anyone admitted her
        logs.append(carol.repo, key, alice.team_id, "team", {"team": True}, note(f"early {i}", alice.id))
    carol.git("push", "--quiet", "origin", f"refs/hive/logs/{carol.id}/team")
    alice.ok("sync")
    with db.connect(alice.clone / ".git" / "gitive" / "index.sqlite") as conn:
        assert conn.execute("SELECT COUNT(*) FROM entries WHERE author = ?", (carol.id,)).fetchone()[0] == 0
    assert [p["kind"] for p in _problems(alice) if carol.id[:12] in p["detail"]] == ["unknown-signer"]
    walks = _walks(monkeypatch)
    assert _ingest(alice, monkeypatch).refs_read == 0 and walks == []
    monkeypatch.undo()

    fleet.join(carol, fleet.invite(alice), "carol")
    alice.ok("sync")  # the roster now admits carol: her log is read, though its tip did not move
    names = sorted(e["record"]["name"] for e in alice.json("log", "--log", "team") if e["author"] == carol.id)
    assert names == ["note early 0", "note early 1", "note early 2"]
    assert not [p for p in _problems(alice) if p["kind"] == "unknown-signer"]


def test_a_rewrapped_roster_entry_never_quarantines_the_founder(fleet: Fleet, pair: tuple[Machine, Machine],
                                                              bare_remote: Path) -> None:
    alice, bob = pair
    mallory = fleet.machine("evil", bare_remote)
    ref = refs.log_ref(alice.id, "roster")
    mallory.git("fetch", "--quiet", "origin", "+refs/hive/*:refs/hive-remotes/origin/*")
    chain = logs.entries(mallory.repo, "refs/hive-remotes/origin/logs/" + ref[len("refs/hive/logs/"):])
    last = chain[-1]
    rewrapped = hostile.rewrap(mallory.repo, last)  # the founder's signed bytes, another commit
    push_commit(mallory, rewrapped, ref, force=True)
    bob.ok("sync")
    before = {m["person"] for m in bob.json("team")["members"]}
    assert before == {"alice", "bob"}
    kinds = {p["kind"] for p in _problems(bob)}
    assert "equivocation" not in kinds and "malformed" in kinds
    bob.ok("index", "rebuild")
    assert {m["person"] for m in bob.json("team")["members"]} == {"alice", "bob"}

    # the founder can still push her roster: her sync replaces the re-wrap with a lease on what it fetched
    alice.decided("invite", "--no-push")
    result = alice.json("sync")
    assert result["ok"] and ref in result["pushed"]["origin"]
    [replaced] = result["replaced"]
    assert replaced["ref"] == ref and replaced["tip"] == rewrapped
    assert replaced["signers"] == {alice.id: 1} and replaced["malformed"] == 1  # her own bytes, re-wrapped
    assert fixtures.ref_tips(bare_remote)[ref] == refs.tip(alice.repo, ref)
    [problem] = [p for p in _problems(alice) if p["kind"] == "replaced"]
    assert "alice/laptop (1), 1 of them no well-formed entry" in problem["detail"]


def test_forged_commits_stacked_on_an_honest_ref_are_replaced_and_doctor_names_the_signer(
        fleet: Fleet, pair: tuple[Machine, Machine], bare_remote: Path) -> None:
    alice, bob = pair
    bob.append(note("honest", alice.id))
    bob.ok("sync")
    alice.ok("sync")
    ref = refs.log_ref(bob.id, "team")
    # alice (a real member, with her own key) stacks two entries claiming bob on bob's ref
    top = refs.tip(alice.repo, "refs/hive-remotes/origin/logs/" + ref[len("refs/hive/logs/"):])
    below = logs.read_entry(alice.repo, top)
    body = {"v": 2, "author": bob.id, "log": "team", "scope": {"team": True}, "seq": 2, "at": below.body["at"],
            "record": note("forged", alice.id), "prev": below.hash}
    one = hostile.forged_entry(alice.repo, alice.key, alice.team_id, body, top, claim=bob.id)
    two = hostile.forged_entry(alice.repo, alice.key, alice.team_id,
                               {**body, "seq": 3, "prev": logs.read_entry(alice.repo, one).hash}, one)
    push_commit(alice, two, ref, force=True)
    bob.append(note("after", alice.id))  # bob's next entry cannot fast-forward the remote any more
    result = bob.json("sync")
    assert result["ok"], result
    [replaced] = result["replaced"]
    assert replaced["commits"] == 2 and replaced["signers"] == {alice.id: 2}  # claims bob, signed by alice
    assert fixtures.ref_tips(bare_remote)[ref] == refs.tip(bob.repo, ref)
    [problem] = [p for p in _problems(bob) if p["kind"] == "replaced"]
    assert "alice/laptop (2)" in problem["detail"]
    alice.ok("sync")
    assert [e["record"]["name"] for e in alice.json("log", "--log", "team")] == ["note after", "note honest"]


def test_entries_of_ours_we_do_not_hold_are_never_overwritten(pair: tuple[Machine, Machine],
                                                            tmp_path: Path) -> None:
    alice, bob = pair
    bob.append(note("one", alice.id))
    bob.ok("sync")
    twin = Machine("desk-copy", bob.home, tmp_path / "desk-copy")  # bob's key, restored elsewhere
    shutil.copytree(bob.clone, twin.clone)
    twin.append(note("two from the copy", alice.id))
    twin.ok("sync")
    bob.append(note("two from desk", alice.id))
    result = bob.run("sync", "--json")
    assert result.code == 1
    [rejected] = result.json()["rejected"]
    assert "signed by this machine that it does not have" in rejected["reason"]
    ref = refs.log_ref(bob.id, "team")
    assert logs.read_entry(twin.repo, fixtures.ref_tips(Path(twin.git("remote", "get-url", "origin").strip()))[
        ref]).body["record"]["name"] == "note two from the copy"


def test_quarantined_lessons_stop_being_listed_at_once(fleet: Fleet, bare_remote: Path, make_bare,
                                                      tmp_path: Path) -> None:
    from testing.lessons import propose

    alice, bob = fleet.team(bare_remote, ("alice", "a"), ("bob", "b"))
    fixtures.commit_file(alice.clone, "api.proto", "syntax = 1;\n", "api")
    alice.git("push", "--quiet", "origin", "main")
    bob.git("pull", "--quiet", "--ff-only", "origin", "main")
    twin = Machine("b-copy", bob.home, tmp_path / "b-copy")
    shutil.copytree(bob.clone, twin.clone)
    first = propose(bob, "Regenerate the stubs after editing api.proto", evidence=["file:api.proto"])
    bob.ok("sync")
    alice.ok("sync")
    assert first in {row["id"] for row in alice.json("lessons", "list")}
    propose(twin, "Never regenerate the stubs", evidence=["file:api.proto"])  # the same seq, other bytes
    mirror = make_bare("mirror.git")
    twin.git("remote", "add", "mirror", str(mirror))
    twin.git("push", "--quiet", "mirror", f"refs/hive/logs/{bob.id}/{bob.project_log}")
    alice.git("remote", "add", "mirror", str(mirror))
    alice.git("config", "--add", "remote.mirror.fetch", "+refs/hive/*:refs/hive-remotes/mirror/*")
    alice.ok("sync", "--remote", "mirror")
    incremental = {row["id"] for row in alice.json("lessons", "list")}
    assert first not in incremental
    assert "equivocation" in {p["kind"] for p in _problems(alice)}
    alice.ok("index", "rebuild")
    assert {row["id"] for row in alice.json("lessons", "list")} == incremental
    assert any(name.startswith("refs/hive-pinned/forks/") for name in fixtures.ref_tips(alice.clone))


def test_doctor_reports_an_inner_signature_that_fails(fleet: Fleet, pair: tuple[Machine, Machine],
                                                     bare_remote: Path) -> None:
    alice, bob = pair
    key, other = bob.key, make_key(fleet.machine("other", bare_remote))
    one = bob.append(note("one", alice.id))
    env = signed_entry(other, alice.team_id, bob.id, 2, note("two", alice.id))
    body = {"v": 2, **env["body"], "prev": one.hash}
    two = hostile.forged_entry(bob.repo, other, alice.team_id, body, one.commit, claim=bob.id)  # a bad inner sig
    three_body = {"v": 2, "author": bob.id, "log": "team", "scope": {"team": True}, "seq": 3,
                  "at": body["at"], "record": note("three", alice.id), "prev": logs.read_entry(bob.repo, two).hash}
    three = hostile.forged_entry(bob.repo, key, alice.team_id, three_body, two)
    bob.git("update-ref", refs.log_ref(bob.id, "team"), three)
    bob.ok("sync")
    alice.ok("sync")
    assert [e["record"]["name"] for e in alice.json("log", "--log", "team")] == ["note three", "note two", "note one"]
    with db.connect(alice.clone / ".git" / "gitive" / "index.sqlite") as conn:
        assert queries.counts(conn)["entries"] > 0
        unchecked = conn.execute("SELECT seq FROM entries WHERE author = ? AND log = 'team' AND sig_checked = 0 "
                                 "ORDER BY seq",
                                 (bob.id,)).fetchall()
    assert [s for (s,) in unchecked] == [1, 2]  # vouched for by seq 3, not checked yet
    [problem] = [p for p in _problems(alice) if p["kind"] == "inner-signature"]
    assert problem["seq"] == 2
