"""One person, many repositories, teams and remotes: ``attach``, ``init`` on a remote that holds a team, every
remote ``sync`` uses, and a repository without one. Real clones, real bare remotes, the CLI in-process."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitive.core.records import project_log
from gitive.store import refs
from testing import fixtures
from testing.machines import Fleet, Machine, one_line_error


def _clone(fleet: Fleet, home_of: Machine, remote: Path, name: str) -> Machine:
    """Another clone on the same machine as ``home_of`` (same ``GITIVE_HOME``, so the same key)."""
    return Machine(name, home_of.home, fixtures.clone(remote, fleet.base / "clones" / name))


def _commit_file(machine: Machine, name: str = "notes.txt") -> None:
    path = machine.clone / name
    path.write_text((path.read_text() if path.exists() else "") + f"{machine.name}\n")
    machine.git("add", name)
    machine.git("commit", "--quiet", "-m", f"add {name}")


def _propose(machine: Machine, text: str, *args: str) -> str:
    _commit_file(machine)
    return machine.ok("lessons", "propose", "--kind", "Gotcha", "--text", text, "--evidence", "file:notes.txt",
                      *args).out.strip()


def _hive_logs(remote: Path) -> set[str]:
    return {name.split("/", 3)[3] for name in fixtures.ref_tips(remote) if name.startswith("refs/hive/logs/")}


def test_one_machine_in_two_teams_and_three_repositories(fleet: Fleet, make_bare) -> None:
    remotes = [make_bare(f"r{n}.git") for n in range(3)]
    r0 = fleet.found(fleet.machine("r0", remotes[0]), "alice")  # team "r0"
    r1 = _clone(fleet, r0, remotes[1], "r1")
    r1.decided("init", "--person", "alice", "--name", "beta")
    r1.ok("sync")
    r2 = _clone(fleet, r0, remotes[2], "r2")
    attached = r2.json("attach", "--team", "beta")
    teams = {m.name: m.json("team")["team_id"] for m in (r0, r1, r2)}
    assert teams["r1"] == teams["r2"] == attached["team"]["id"] != teams["r0"]
    assert attached["team"]["name"] == "beta" and attached["project_role"] == "member" and attached["sync"]["ok"]
    # ownership is granted at a terminal, never claimed by attaching first (docs/verification.md §3)
    r2.decided("project", "confirm", "alice", "--owner")
    # the attached clone shares beta's store and roster: one machine, one member entry
    assert r2.json("team")["members"] == r1.json("team")["members"]
    assert len(r1.json("team")["members"]) == 1

    # project lessons in each repository, team and personal lessons in each team: nothing collides
    lessons = {m.name: _propose(m, f"project lesson of {m.name}") for m in (r0, r1, r2)}
    for m in (r0, r1, r2):
        _propose(m, f"team lesson of {m.name}", "--scope", "team")
        _propose(m, f"personal lesson of {m.name}", "--scope", "personal")
        assert m.json("sync")["ok"]
    for m in (r0, r1, r2):
        report = m.run("doctor", "--json")
        assert report.code == 0, str(report)
    # each project's lessons travel with its own remote, in a log of their own
    for n, m in enumerate((r0, r1, r2)):
        pid = m.json("lessons", "show", lessons[m.name])["project"]
        assert f"{r0.id}/{project_log(pid)}" in _hive_logs(remotes[n])
    assert not any(log.endswith("/team") for log in _hive_logs(remotes[2]))  # beta's team log is in r1's store
    # every command names the team it acts for, as this machine is in two
    assert "team: beta" in r2.ok("team").err and "team: r0" in r0.ok("team").err
    assert r1.json("lessons", "show", lessons["r1"])["text"] == "project lesson of r1"


def test_init_refuses_a_remote_that_already_holds_a_team(fleet: Fleet, bare_remote: Path, alice: Machine) -> None:
    bob = fleet.machine("desk", bare_remote)
    before = bob.config()
    one_line_error(bob.run("init", "--person", "bob"), "already holds a gitive team", "gitive join")
    assert bob.config() == before and not (bob.home / "machine.key").exists()
    # the founder's second clone of the same remote is told to attach, and attach explains worktrees
    again = _clone(fleet, alice, bare_remote, "laptop-2")
    one_line_error(again.run("init", "--person", "alice"), "which this machine belongs to", "gitive attach")
    one_line_error(again.run("attach"), "git worktree add")
    assert "hive.team" not in again.config()


def test_init_with_a_team_remote_that_holds_a_team_is_refused(fleet: Fleet, bare_remote: Path, make_bare) -> None:
    store = make_bare("team.git")
    alice = fleet.machine("laptop", bare_remote)
    alice.decided("init", "--person", "alice", "--team-remote", str(store))
    alice.ok("sync")
    other = fleet.machine("other", make_bare("other.git"))
    one_line_error(other.run("init", "--person", "zed", "--team-remote", str(store)), "already holds")


def test_join_without_a_code_attaches_another_repository(fleet: Fleet, make_bare, alice: Machine) -> None:
    other = _clone(fleet, alice, make_bare("tools.git"), "tools")
    done = other.json("join")
    assert done["team"]["id"] == alice.team_id and done["person"] == "alice"
    one_line_error(other.run("attach"), "already belongs")


def test_join_with_a_code_on_a_member_machine_says_attach(fleet: Fleet, make_bare, alice: Machine) -> None:
    code = fleet.invite(alice)
    other = _clone(fleet, alice, make_bare("tools.git"), "tools")
    one_line_error(other.run("join", code, "--person", "alice"), "gitive attach")
    assert "hive.team" not in other.config()


@pytest.mark.usefixtures("alice")
def test_attach_on_a_machine_in_no_team_is_refused_and_changes_nothing(fleet: Fleet, make_bare) -> None:
    stranger = fleet.machine("stranger", make_bare("s.git"))
    before = stranger.config()
    one_line_error(stranger.run("attach"), "in no team yet")
    # pointed at a team it is not in (another machine's clone), it is told to join
    one_line_error(stranger.run("attach", "--from", str(fleet.base / "clones" / "laptop")), "gitive join")
    assert stranger.config() == before


def test_a_second_remote_added_later_gets_every_push(bare_remote: Path, make_bare, alice: Machine) -> None:
    mirror = make_bare("mirror.git")
    alice.git("remote", "add", "mirror", str(mirror))
    doctor = alice.run("doctor", "--json").json()
    assert [p["kind"] for p in doctor["problems"]] == ["missing-refspec"]  # doctor says what sync will skip
    assert doctor["remotes"][0]["remotes"] == ["origin"]
    alice.git("config", "--add", "remote.mirror.fetch", "+refs/hive/*:refs/hive-remotes/mirror/*")
    assert set(alice.run("doctor", "--json").json()["remotes"][0]["remotes"]) == {"origin", "mirror"}
    report = alice.json("sync")
    assert set(report["fetched"]) == {"origin", "mirror"}
    roster = refs.log_ref(alice.id, "roster")
    assert fixtures.ref_tips(mirror)[roster] == fixtures.ref_tips(bare_remote)[roster]
    assert alice.ok("doctor").code == 0


def test_hive_remote_names_exactly_the_remotes_sync_uses(bare_remote: Path, make_bare, alice: Machine) -> None:
    mirror = make_bare("mirror.git")
    alice.git("remote", "add", "mirror", str(mirror))
    alice.git("config", "--add", "remote.mirror.fetch", "+refs/hive/*:refs/hive-remotes/mirror/*")
    alice.git("config", "--add", "hive.remote", "mirror")
    alice.append({"type": "team", "name": "note", "founder": alice.id})
    report = alice.json("sync")
    assert set(report["fetched"]) == {"mirror"}
    assert refs.log_ref(alice.id, "team") in fixtures.ref_tips(mirror)
    assert refs.log_ref(alice.id, "team") not in fixtures.ref_tips(bare_remote)
    doctor = alice.run("doctor", "--json")
    assert doctor.code == 1
    [skipped] = doctor.json()["problems"]
    assert skipped["kind"] == "remote-skipped" and "origin" in skipped["where"]
    human = alice.run("doctor")
    assert "sync uses mirror (as hive.remote names them)" in human.out


def test_a_repository_with_no_remote_says_so(fleet: Fleet, tmp_path: Path) -> None:
    repo = fixtures.init_repo(tmp_path / "alone")
    alice = Machine("alone", fleet.base / "homes" / "alone", repo)
    alice.home.mkdir(parents=True)
    init = alice.decided("init", "--person", "alice")
    assert "no remote" in init.out and "git remote add origin" in init.out
    sync = alice.run("sync")
    assert sync.code == 1 and "no remote to sync with" in sync.out
    assert alice.run("sync", "--json").json()["no_remote"]
    before = {k: v for k, v in fixtures.ref_tips(repo).items() if k.startswith("refs/hive")}
    one_line_error(alice.run("invite"), "no remote", "nobody could redeem")
    assert {k: v for k, v in fixtures.ref_tips(repo).items() if k.startswith("refs/hive")} == before
    doctor = alice.run("doctor", "--json").json()
    assert [p["kind"] for p in doctor["problems"]] == ["no-remote"]


def test_doctor_reports_a_remote_that_refuses_pushes(bare_remote: Path, alice: Machine) -> None:
    hook = bare_remote / "hooks" / "pre-receive"
    hook.parent.mkdir(exist_ok=True)  # the hermetic template dir is empty: no hooks/ folder
    hook.write_text("#!/bin/sh\necho 'hive refs are not allowed here' >&2\nexit 1\n")
    hook.chmod(0o755)
    alice.append({"type": "team", "name": "note", "founder": alice.id})
    assert alice.run("sync").code == 1
    problems = alice.run("doctor", "--json").json()["problems"]
    [refused] = [p for p in problems if p["kind"] == "push-refused"]
    assert "origin" in refused["where"] and refs.log_ref(alice.id, "team") in refused["detail"]
    human = alice.run("doctor")
    assert human.code == 1 and "push-refused" in human.out
    hook.unlink()
    assert alice.json("sync")["ok"]
    assert alice.ok("doctor").code == 0


@pytest.mark.parametrize("scope", ["project", "team"])
def test_an_attached_clone_reads_the_team_but_keeps_its_project(fleet: Fleet, bare_remote: Path, make_bare,
                                                               scope: str, alice: Machine) -> None:
    tools_remote = make_bare("tools.git")
    tools = _clone(fleet, alice, tools_remote, "tools")
    tools.ok("attach")
    lesson = _propose(tools, f"a {scope} lesson from tools", "--scope", scope)
    tools.ok("sync")
    alice.ok("sync")
    if scope == "team":  # team lessons are one store: visible from every clone of the team
        assert alice.json("lessons", "show", lesson)["text"] == "a team lesson from tools"
        assert f"{alice.id}/team" in _hive_logs(bare_remote)
    else:  # project lessons stay with their repository and its remote
        assert alice.run("lessons", "show", lesson).code == 1
        assert any(log.startswith(f"{alice.id}/project-") for log in _hive_logs(tools_remote))


def test_status_shows_the_remotes_sync_uses(make_bare, alice: Machine) -> None:
    alice.git("remote", "add", "backup", str(make_bare("backup.git")))
    [plan] = alice.json("status")["remotes"]
    assert plan["remotes"] == ["origin"] and plan["without_refspec"] == ["backup"]
    assert "sync uses origin (every remote with the hive refspec); not backup" in alice.ok("status").out


def test_a_hive_remote_an_older_version_wrote_is_migrated(make_bare, alice: Machine) -> None:
    # as versions before 2026-12 left the config: hive.remote = every remote at init, no config version
    alice.git("config", "--unset", "hive.configVersion")
    alice.git("config", "--add", "hive.remote", "origin")
    mirror = make_bare("mirror.git")
    alice.git("remote", "add", "mirror", str(mirror))
    alice.git("config", "--add", "remote.mirror.fetch", "+refs/hive/*:refs/hive-remotes/mirror/*")
    assert set(alice.run("doctor", "--json").json()["remotes"][0]["remotes"]) == {"origin", "mirror"}
    assert set(alice.json("sync")["fetched"]) == {"origin", "mirror"}
    config = alice.config()
    assert "hive.remote=" not in config and "hive.configversion=2" in config
    assert refs.log_ref(alice.id, "roster") in fixtures.ref_tips(mirror)
