"""``gitive init``, ``invite``, ``join`` and ``team`` through the CLI, several machines around real remotes."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitive.core.clock import now_ms
from gitive.index.deciding import REMOVED
from gitive.team import invites
from testing import fixtures
from testing.machines import Fleet, Machine, one_line_error, roster_view

DAY_MS = 86_400_000


def _hive_refs(machine: Machine) -> dict[str, str]:
    return {k: v for k, v in fixtures.ref_tips(machine.clone).items() if k.startswith("refs/hive")}


def _assert_three_machines_agree(fleet: Fleet, remote: str | Path, remote_path: Path) -> None:
    alice, bob, carol = fleet.team(remote, ("alice", "laptop"), ("bob", "desk"), ("carol", "box"))
    for m in (alice, bob, carol):
        report = m.json("sync")
        assert report["ok"] and report["unreachable"] == {} and report["rejected"] == []
    views = [m.json("team") for m in (alice, bob, carol)]
    expected = sorted([("alice", "laptop", alice.id, True), ("bob", "desk", bob.id, True),
                       ("carol", "box", carol.id, True)])
    for view in views:
        assert roster_view(view) == expected
        assert view["founder"] == alice.id
        assert view["team_id"] == views[0]["team_id"]
    assert {m["machine"]: m["via"] for m in views[0]["members"]} == {
        alice.id: "founder", bob.id: "invite", carol.id: "invite"}
    # every machine's roster log reached the remote, each under its own machine's name only
    served = {k for k in fixtures.ref_tips(remote_path) if k.startswith("refs/hive/")}
    assert {f"refs/hive/logs/{m.id}/roster" for m in (alice, bob, carol)} <= served
    assert {k.split("/")[3] for k in served} == {alice.id, bob.id, carol.id}  # refs/hive/<kind>/<machine>


def test_three_machines_see_one_roster_over_a_file_remote(fleet: Fleet, bare_remote: Path) -> None:
    _assert_three_machines_agree(fleet, bare_remote, bare_remote)


def test_three_machines_see_one_roster_over_git_daemon(fleet: Fleet, git_daemon) -> None:
    url = git_daemon("team.git")
    assert url.startswith("git://127.0.0.1:")
    _assert_three_machines_agree(fleet, url, git_daemon.base / "team.git")


def test_init_twice_is_refused_and_changes_nothing(alice: Machine) -> None:
    config, refs = alice.config(), _hive_refs(alice)
    one_line_error(alice.run("init", "--person", "alice", "--machine", "laptop"), "already belongs")
    one_line_error(alice.run("init", "--person", "zed"), "already belongs")
    assert alice.config() == config
    assert _hive_refs(alice) == refs


def test_init_in_a_joined_clone_is_refused(pair: list[Machine]) -> None:
    _, bob = pair
    config = bob.config()
    one_line_error(bob.run("init", "--person", "bob"), "already belongs")
    assert bob.config() == config


@pytest.mark.parametrize("code", ["nonsense", "gitive-abc", "gitive-" + "a" * 200, ""])
@pytest.mark.usefixtures("alice")
def test_join_with_bad_code_text_changes_nothing(fleet: Fleet, bare_remote: Path, code: str) -> None:
    bob = fleet.machine("desk", bare_remote)
    config, refs = bob.config(), fixtures.ref_tips(bob.clone)
    one_line_error(bob.decide("join", code, "--person", "bob", "--machine", "desk"), "invite code")
    assert bob.config() == config
    assert fixtures.ref_tips(bob.clone) == refs  # nothing fetched, nothing written
    assert not (bob.home / "machine.key").exists()  # no key made for a code that cannot be used
    assert not (bob.clone / ".git" / "gitive").exists()  # no index


def test_join_with_an_unknown_invite_leaves_the_config_as_it_was(fleet: Fleet, bare_remote: Path,
                                                                 alice: Machine) -> None:
    team_id = alice.json("team")["team_id"]
    code = invites.InviteCode(team_id, alice.id, invites.new_secret()).encode()  # right team, never issued
    bob = fleet.machine("desk", bare_remote)
    config = bob.config()
    one_line_error(bob.decide("join", code, "--person", "bob", "--machine", "desk"), "not in the team's roster")
    assert bob.config() == config
    assert not [r for r in fixtures.ref_tips(bob.clone) if r.startswith("refs/hive/")]  # bob wrote no entry
    assert not (bob.clone / ".git" / "gitive" / "index.sqlite").exists()
    assert bob.id not in {m["machine"] for m in alice.json("team")["members"]}


def test_expired_invite_is_refused(fleet: Fleet, bare_remote: Path, alice: Machine) -> None:
    code = fleet.invite(alice, "--days", "0.01")  # 14.4 minutes
    bob = fleet.machine("desk", bare_remote)
    config = bob.config()
    later = {"GITIVE_NOW_MS": str(now_ms() + DAY_MS // 24)}  # an hour on: past expiry, within clock skew
    one_line_error(bob.decide("join", code, "--person", "bob", "--machine", "desk", env=later), "expired")
    assert bob.config() == config
    # the same code still works before it expires: the refusal was about time, not the code
    fleet.join(bob, code, "bob")
    alice.ok("sync")
    assert bob.id in {m["machine"] for m in alice.json("team")["members"] if m["active"]}


def test_one_time_invite_admits_only_the_first_machine(fleet: Fleet, bare_remote: Path, alice: Machine) -> None:
    code = fleet.invite(alice)
    bob = fleet.join(fleet.machine("desk", bare_remote), code, "bob")
    carol = fleet.machine("box", bare_remote)
    config = carol.config()
    one_line_error(carol.decide("join", code, "--person", "carol", "--machine", "box"), "already used")
    assert carol.config() == config
    alice.ok("sync")
    assert roster_view(alice.json("team")) == sorted([("alice", "laptop", alice.id, True),
                                                      ("bob", "desk", bob.id, True)])


def test_reusable_invite_admits_two_machines(fleet: Fleet, bare_remote: Path, alice: Machine) -> None:
    code = fleet.invite(alice, "--reusable")
    bob = fleet.join(fleet.machine("desk", bare_remote), code, "bob")
    carol = fleet.join(fleet.machine("box", bare_remote), code, "carol")
    for m in (alice, bob):
        m.ok("sync")
    expected = sorted([("alice", "laptop", alice.id, True), ("bob", "desk", bob.id, True),
                       ("carol", "box", carol.id, True)])
    for m in (alice, bob, carol):
        assert roster_view(m.json("team")) == expected


def test_join_works_while_the_inviter_is_offline(fleet: Fleet, bare_remote: Path, alice: Machine) -> None:
    first, second = fleet.invite(alice), fleet.invite(alice)
    before = _hive_refs(alice)
    # alice runs nothing from here on; bob and carol join through the remote alone
    bob = fleet.join(fleet.machine("desk", bare_remote), first, "bob")
    carol = fleet.join(fleet.machine("box", bare_remote), second, "carol")
    assert _hive_refs(alice) == before
    expected = sorted([("alice", "laptop", alice.id, True), ("bob", "desk", bob.id, True),
                       ("carol", "box", carol.id, True)])
    assert roster_view(carol.json("team")) == expected
    bob.ok("sync")
    assert roster_view(bob.json("team")) == expected
    alice.ok("sync")  # back online: alice learns both
    assert roster_view(alice.json("team")) == expected


def test_invite_for_a_person_refuses_another_person(fleet: Fleet, bare_remote: Path, alice: Machine) -> None:
    code = fleet.invite(alice, "--person", "bob")
    carol = fleet.machine("box", bare_remote)
    one_line_error(carol.decide("join", code, "--person", "carol", "--machine", "box"), "'bob'")
    fleet.join(fleet.machine("desk", bare_remote), code, "bob")


def test_second_machine_of_a_person_needs_that_persons_invite(fleet: Fleet, bare_remote: Path,
                                                              pair: list[Machine]) -> None:
    alice, bob = pair
    from_alice = fleet.invite(alice)
    laptop2 = fleet.machine("bob-laptop", bare_remote)
    one_line_error(laptop2.decide("join", from_alice, "--person", "bob", "--machine", "bob-laptop"),
                   "'bob'")
    from_bob = fleet.invite(bob)
    fleet.join(laptop2, from_bob, "bob", same_person_as=bob)
    alice.ok("sync")
    bobs = [m for m in alice.json("team")["members"] if m["person"] == "bob"]
    assert sorted(m["name"] for m in bobs) == ["bob-laptop", "desk"]


def test_team_remove_deactivates_the_machine_everywhere(trio: list[Machine]) -> None:
    alice, bob, carol = trio
    alice.decided("team", "remove", "bob/desk")
    carol.ok("sync")
    for m in (alice, carol):
        active = {x["machine"]: x["active"] for x in m.json("team")["members"]}
        assert active == {alice.id: True, bob.id: False, carol.id: True}
    # the removed machine learns it at its next sync, says so on every command, and can no longer invite
    synced = bob.ok("sync")
    assert synced.err.strip() == f"gitive: {REMOVED}"
    assert {x["machine"]: x["active"] for x in bob.json("team")["members"]}[bob.id] is False
    one_line_error(bob.decide("invite"), "removed from the team")
    # and it writes no shared record: a proposal is refused with one clear line, nothing is written
    fixtures.commit_file(bob.clone, "notes.md", "x\n")
    before = fixtures.ref_tips(bob.clone, "refs/hive/logs/")
    refused = bob.run("lessons", "propose", "--kind", "Gotcha", "--text", "still here", "-e", "file:notes.md")
    one_line_error(refused, "removed from the team")
    assert fixtures.ref_tips(bob.clone, "refs/hive/logs/") == before


def test_team_remove_of_nobody_is_a_one_line_error(alice: Machine) -> None:
    one_line_error(alice.decide("team", "remove", "zed"), "'zed'")


def test_command_outside_a_repository_is_a_one_line_error(tmp_path: Path, gitive_home: Path) -> None:
    from testing.machines import run_cli

    outside = tmp_path / "not-a-repo"
    outside.mkdir()
    for argv in (["team"], ["log"], ["sync"], ["doctor"], ["init", "--person", "alice"]):
        one_line_error(run_cli(argv, outside, {}), "not inside a git repository")


def test_command_in_a_repository_without_a_team_names_init(fleet: Fleet, bare_remote: Path) -> None:
    bob = fleet.machine("desk", bare_remote)
    for argv in (["team"], ["log"], ["sync"], ["doctor"], ["invite"], ["index", "rebuild"]):
        one_line_error(bob.run(*argv), "gitive init")


def test_sync_with_an_unknown_remote_is_a_one_line_error(alice: Machine) -> None:
    one_line_error(alice.run("sync", "--remote", "nope"), "'nope'")


def test_sync_to_an_unreachable_remote_reports_one_line(tmp_path: Path, alice: Machine) -> None:
    gone = tmp_path / "gone.git"
    alice.git("remote", "set-url", "origin", str(gone))
    result = alice.run("sync")
    assert result.code == 1, str(result)
    assert "Traceback" not in result.out + result.err
    naming = [ln for ln in (result.out + result.err).splitlines() if "origin" in ln]
    assert len(naming) == 1 and str(gone) in naming[0], str(result)
    report = alice.run("sync", "--json")
    assert report.code == 1
    assert set(report.json()["unreachable"]) == {"origin"}
    assert report.json()["ok"] is False
