"""Roster operations (``gitive.enrolment.ops``) called as a library, against real repositories."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pygit2
import pytest

from gitive.core import gesture
from gitive.core.ids import is_name
from gitive.core.keys import key_path, load_key, machine_id
from gitive.enrolment import ops
from gitive.errors import GitiveError, InvalidRecord, InviteError, NotAllowed, NoTeam
from gitive.index import queries
from gitive.index.refresh import fresh_index
from gitive.store import logs, refs
from gitive.team import invites
from gitive.team.hive import KEY_FOUNDER, KEY_REMOTE, KEY_STORE, KEY_TEAM, Hive, open_hive
from testing import builders, fixtures, people

DAY = 86_400_000


def _config(path: Path) -> str:
    return fixtures.run_git(["config", "--list", "--local"], cwd=path)


T0 = 1_700_000_000_000  # founding
T1 = T0 + 1_000  # everything after it, as a person at a terminal would (a later millisecond)


def _set_clock(monkeypatch: pytest.MonkeyPatch, ms: int) -> None:
    monkeypatch.setenv("GITIVE_NOW_MS", str(ms))


@pytest.fixture
def founded(bare_remote: Path, make_clone, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, ops.Founded]:
    """A clone of ``bare_remote`` where this test's machine founded team ``acme`` as alice at ``T0``.

    The clock then stands at ``T1`` for whatever the test does next.
    """
    _set_clock(monkeypatch, T0)
    clone = make_clone(bare_remote, "alice")
    done = ops.found(clone, "alice", "laptop", "acme", signer=people.person_key())
    _set_clock(monkeypatch, T1)
    return clone, done


def _roster(hive: Hive) -> list[dict]:
    return [e.signed for e in logs.entries(hive.store, refs.log_ref(hive.me, "roster"))]


def _redeem(hive: Hive, code: invites.InviteCode, joiner: builders.Machine, person: str, ts: int) -> None:
    """Write ``joiner``'s own admission entry into ``hive``'s store (as if fetched from the joiner)."""
    admission = {"via": "invite", "invite": code.invite_id, "proof": invites.prove(code, joiner.id, person)}
    record = builders.member_record(joiner, person, ts, name=person + "-box", admission=admission)
    record = builders.gestured(builders.person_signer(person), joiner, record, hive.team_id)
    logs.append(hive.store, joiner.key, hive.team_id, "roster", ops.TEAM_SCOPE, record, at=ts)


def test_found_writes_the_founder_and_team_entries(founded: tuple[Path, ops.Founded]) -> None:
    clone, done = founded
    assert done.key_created and done.remotes == ["origin"]
    assert done.machine == machine_id(load_key())
    assert stat.S_IMODE(os.stat(key_path()).st_mode) == 0o600
    hive = open_hive(clone)
    assert (hive.team_id, hive.founder) == (done.team_id, done.machine)
    member, key, team = _roster(hive)
    signer = people.person_key()
    assert member["body"]["record"]["admission"] == {"via": "founder"}
    assert (member["body"]["record"]["person"], member["body"]["record"]["name"]) == ("alice", "laptop")
    assert member["body"]["record"]["role"] == "admin"  # the founder is the team's first admin
    assert member["body"]["record"]["emails"] == [fixtures.AUTHOR_EMAIL]
    assert member["body"]["record"]["gesture"]["key"] == signer.public
    assert gesture.key_of(done.team_id, done.machine, member["body"]["record"]) == signer.public
    assert (key["body"]["record"]["person"], key["body"]["record"]["key"]) == ("alice", signer.public)
    assert team["body"]["record"] == {"type": "team", "name": "acme", "founder": done.machine, "version": 2}
    assert [member["body"]["seq"], key["body"]["seq"], team["body"]["seq"]] == [1, 2, 3]
    config = _config(clone)
    assert f"{KEY_TEAM}={done.team_id}" in config and f"{KEY_FOUNDER}={done.machine}" in config
    assert KEY_REMOTE not in config  # no explicit choice: sync uses every remote with the hive refspec
    assert "remote.origin.fetch=+refs/hive/*:refs/hive-remotes/origin/*" in config
    assert "teamstore" not in config.lower()


def test_found_twice_is_refused_and_writes_nothing(founded: tuple[Path, ops.Founded]) -> None:
    clone, _ = founded
    before, tips = _config(clone), fixtures.ref_tips(clone)
    with pytest.raises(GitiveError, match="already belongs"):
        ops.found(clone, "bob", "desk", "other", signer=people.person_key())
    assert _config(clone) == before and fixtures.ref_tips(clone) == tips


@pytest.mark.parametrize(("person", "machine"), [("Alice", "laptop"), ("alice", "my laptop"), ("", "x"),
                                                  ("a" * 65, "x"), ("alice", "")])
def test_found_with_a_bad_name_writes_nothing(git_repo: Path, person: str, machine: str) -> None:
    before = _config(git_repo)
    with pytest.raises(InvalidRecord, match="not allowed"):
        ops.found(git_repo, person, machine, "acme", signer=people.person_key())
    assert _config(git_repo) == before
    assert not fixtures.ref_tips(git_repo, "refs/hive")
    assert not key_path().exists()


def test_found_with_a_team_remote_keeps_the_roster_in_a_separate_store(
        git_repo: Path, make_bare, gitive_home: Path) -> None:
    team_remote = make_bare("team.git")
    done = ops.found(git_repo, "alice", "laptop", "acme", team_remote=str(team_remote), signer=people.person_key())
    hive = open_hive(git_repo)
    assert hive.separate_store
    assert Path(hive.store.path).resolve() == (gitive_home / "teams" / f"{done.team_id}.git").resolve()
    assert f"{KEY_STORE.lower()}=" in _config(git_repo).lower()
    assert not fixtures.ref_tips(git_repo, "refs/hive")  # the project repository holds no roster
    assert [e["body"]["record"]["type"] for e in _roster(hive)] == ["member", "person-key", "team"]
    assert hive.store.remotes["origin"].url == str(team_remote)


def test_create_invite_stores_only_the_hash_and_public_key(founded: tuple[Path, ops.Founded]) -> None:
    clone, done = founded
    hive = open_hive(clone)
    with fresh_index(hive) as (conn, _):
        text, record = ops.create_invite(hive, conn, signer=people.person_key(), reusable=False, ttl_ms=DAY, person="bob")
    code = invites.parse(text)
    assert (code.team_id, code.founder) == (done.team_id, done.machine)
    assert {k: v for k, v in record.items() if k != "gesture"} == {
        "type": "invite", "id": invites.invite_id(code.secret), "key": machine_id(code.key()), "reusable": False,
        "expires": T1 + DAY, "person": "bob"}
    assert gesture.key_of(done.team_id, done.machine, record) == people.person_key().public
    assert _roster(hive)[-1]["body"]["record"] == record
    stored = fixtures.run_git(["log", "-p", "--format=%B", refs.log_ref(done.machine, "roster")], cwd=clone)
    assert code.secret.hex() not in stored and text not in stored


def test_create_invite_by_a_non_member_is_refused(founded: tuple[Path, ops.Founded], tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    clone, _ = founded
    other_home = tmp_path / "other-home"
    monkeypatch.setenv("GITIVE_HOME", str(other_home))
    from gitive.core.keys import load_or_create_key

    load_or_create_key()
    hive = open_hive(clone)
    tips = fixtures.ref_tips(clone, "refs/hive/")
    with fresh_index(hive) as (conn, _), pytest.raises(NoTeam, match="not an active member"):
        ops.create_invite(hive, conn, signer=people.person_key(), reusable=True)
    assert fixtures.ref_tips(clone, "refs/hive/") == tips


def test_check_invite_refuses_unknown_expired_and_wrong_person(founded: tuple[Path, ops.Founded],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    clone, done = founded
    hive = open_hive(clone)
    joiner = builders.machine("joiner")
    with fresh_index(hive) as (conn, _):
        text, _ = ops.create_invite(hive, conn, signer=people.person_key(), reusable=False, ttl_ms=DAY, person="bob")
    code = invites.parse(text)
    with fresh_index(hive) as (conn, _):
        ops.check_invite(conn, code, joiner.id, "bob")
        unknown = invites.InviteCode(done.team_id, done.machine, b"\x01" * 16)
        with pytest.raises(InviteError, match="not in the team's roster"):
            ops.check_invite(conn, unknown, joiner.id, "bob")
        with pytest.raises(InviteError, match="'bob'"):
            ops.check_invite(conn, code, joiner.id, "carol")
        monkeypatch.setenv("GITIVE_NOW_MS", str(T1 + DAY + 1))
        with pytest.raises(InviteError, match="expired"):
            ops.check_invite(conn, code, joiner.id, "bob")


def test_check_invite_refuses_a_used_one_time_invite(founded: tuple[Path, ops.Founded]) -> None:
    clone, _ = founded
    hive = open_hive(clone)
    first, second = builders.machine("first"), builders.machine("second")
    with fresh_index(hive) as (conn, _):
        one_time, _ = ops.create_invite(hive, conn, signer=people.person_key(), reusable=False, ttl_ms=DAY)
        reusable, _ = ops.create_invite(hive, conn, signer=people.person_key(), reusable=True, ttl_ms=DAY)
    one_time_code, reusable_code = invites.parse(one_time), invites.parse(reusable)
    _redeem(hive, one_time_code, first, "bob", T1 + 1)
    _redeem(hive, reusable_code, builders.machine("third"), "dave", T1 + 2)
    with fresh_index(hive) as (conn, _):
        assert {m["machine"] for m in queries.members(conn) if m["active"]} >= {first.id}
        with pytest.raises(InviteError, match="already used"):
            ops.check_invite(conn, one_time_code, second.id, "carol")
        ops.check_invite(conn, reusable_code, second.id, "carol")


def test_check_invite_refuses_an_existing_person_from_another_inviter(founded: tuple[Path, ops.Founded]) -> None:
    clone, _ = founded
    hive = open_hive(clone)
    with fresh_index(hive) as (conn, _):
        first, _ = ops.create_invite(hive, conn, signer=people.person_key(), reusable=False, ttl_ms=DAY)
        second, _ = ops.create_invite(hive, conn, signer=people.person_key(), reusable=False, ttl_ms=DAY)
    _redeem(hive, invites.parse(first), builders.machine("bob-1"), "bob", T1 + 1)
    with fresh_index(hive) as (conn, _), pytest.raises(InviteError, match="already has machines"):
        ops.check_invite(conn, invites.parse(second), builders.machine("bob-2").id, "bob")


def test_remove_matches_person_machine_name_or_id_prefix(founded: tuple[Path, ops.Founded],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    clone, done = founded
    hive = open_hive(clone)
    with fresh_index(hive) as (conn, _):
        text, _ = ops.create_invite(hive, conn, signer=people.person_key(), reusable=True, ttl_ms=DAY)
    code = invites.parse(text)
    box, desk, dave = builders.machine("box"), builders.machine("desk"), builders.machine("dave")
    _redeem(hive, code, box, "bob", T1 + 1)
    _redeem(hive, code, dave, "dave", T1 + 2)
    # bob's second machine, admitted by bob's first (a member entry signed by an admitted machine)
    logs.append(hive.store, box.key, hive.team_id, "roster", ops.TEAM_SCOPE,
                builders.gestured(builders.person_signer("bob"), box,
                                  builders.member_record(desk, "bob", T1 + 3, name="bob-desk"), hive.team_id),
                at=T1 + 3)
    _set_clock(monkeypatch, T1 + 1_000)
    signer = people.person_key()
    with fresh_index(hive) as (conn, _):
        with pytest.raises(GitiveError, match="no active member"):
            ops.remove(hive, conn, "zed", signer)
        with pytest.raises(GitiveError, match="no active member"):
            ops.remove(hive, conn, dave.id[:7], signer)  # too short to be taken for an id
        assert [m["machine"] for m in ops.remove(hive, conn, "bob/bob-desk", signer)] == [desk.id]
        assert [m["machine"] for m in ops.remove(hive, conn, dave.id[:8], signer)] == [dave.id]
    with fresh_index(hive) as (conn, _):
        active = {m["machine"]: m["active"] for m in queries.members(conn)}
        assert active == {done.machine: True, box.id: True, desk.id: False, dave.id: False}
        assert [m["machine"] for m in ops.remove(hive, conn, "bob", signer)] == [box.id]  # the active one left
    departures = [e["body"]["record"] for e in _roster(hive) if e["body"]["record"]["type"] == "member"
                  and not e["body"]["record"]["active"]]
    assert [d["machine"] for d in departures] == [desk.id, dave.id, box.id]
    assert all(d["person"] in ("bob", "dave") and "admission" not in d for d in departures)
    # each removal records the heads of the removed machine's logs as this index held them
    assert [d["heads"] for d in departures] == [{}, {"roster": 1}, {"roster": 2}]


def test_remove_of_another_persons_machine_by_a_member_is_refused(founded: tuple[Path, ops.Founded],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    clone, _ = founded
    hive = open_hive(clone)
    with fresh_index(hive) as (conn, _):
        text, _ = ops.create_invite(hive, conn, signer=people.person_key(), reusable=True, ttl_ms=DAY)
    _redeem(hive, invites.parse(text), builders.machine("box"), "bob", T1 + 1)
    with fresh_index(hive) as (conn, _), pytest.raises(NotAllowed, match="without an active admin"):
        ops.remove(hive, conn, "alice", people.person_key())  # the last admin cannot leave
    assert [e["body"]["record"]["type"] for e in _roster(hive)][-1] == "invite"  # nothing written


def test_remove_by_a_removed_machine_is_refused(founded: tuple[Path, ops.Founded],
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from gitive.enrolment import decisions

    clone, _ = founded
    hive = open_hive(clone)
    signer = people.person_key()
    with fresh_index(hive) as (conn, _):
        text, _ = ops.create_invite(hive, conn, signer=signer, reusable=True, ttl_ms=DAY)
    _redeem(hive, invites.parse(text), builders.machine("box"), "bob", T1 + 1)
    _set_clock(monkeypatch, T1 + 1_000)
    with fresh_index(hive) as (conn, _):
        decisions.set_role(hive, conn, "bob", "admin", signer)  # someone else is an admin: alice may leave
    _set_clock(monkeypatch, T1 + 2_000)
    with fresh_index(hive) as (conn, _):
        ops.remove(hive, conn, "alice", signer)  # the founder signs its own departure
    with fresh_index(hive) as (conn, _):
        assert {m["person"]: m["active"] for m in queries.members(conn)} == {"alice": False, "bob": True}
        with pytest.raises(NoTeam, match="removed from the team"):
            ops.remove(hive, conn, "alice", signer)
    departure = _roster(hive)[-1]["body"]
    assert departure["record"]["heads"]["roster"] == departure["seq"]  # its own heads include the departure


def test_join_hive_then_unjoin_restores_the_config(founded: tuple[Path, ops.Founded], bare_remote: Path,
                                                   make_clone) -> None:
    _, done = founded
    clone = make_clone(bare_remote, "bob")
    before = _config(clone)
    code = invites.InviteCode(done.team_id, done.machine, b"\x02" * 16)
    hive, parsed = ops.join_hive(clone, code.encode(), None)
    assert parsed == code and hive.team_id == done.team_id and hive.founder == done.machine
    assert "+refs/hive/*:refs/hive-remotes/origin/*" in _config(clone)
    ops.unjoin(hive)
    assert _config(clone) == before


def test_join_hive_refuses_another_team_and_a_repository_without_remote(
        founded: tuple[Path, ops.Founded], git_repo: Path) -> None:
    clone, done = founded
    foreign = invites.InviteCode("0f" * 16, done.machine, b"\x03" * 16).encode()
    before = _config(clone)
    with pytest.raises(InviteError, match="another team"):
        ops.join_hive(clone, foreign, None)
    assert _config(clone) == before
    lonely = _config(git_repo)
    with pytest.raises(InviteError, match="no remote"):
        ops.join_hive(git_repo, foreign, None)
    assert _config(git_repo) == lonely


def test_default_machine_name_is_a_valid_name() -> None:
    assert is_name(ops.default_machine_name())


def test_git_emails_merges_config_and_extras(git_repo: Path) -> None:
    repo = pygit2.Repository(str(git_repo))
    assert ops.git_emails(repo, ["b@x", "a@x", "b@x"]) == sorted({"a@x", "b@x", fixtures.AUTHOR_EMAIL})
