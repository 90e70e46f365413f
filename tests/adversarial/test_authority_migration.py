"""A team built by the code before roles and person keys (no `version`, roles, heads or gestures) reads the
same today, is told to create person keys, migrates, and keeps its old reviews valid up to the migration point.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from gitive.core.clock import now_ms
from gitive.core.records import TEAM_SCOPE
from gitive.enrolment import ops
from gitive.store import logs
from gitive.team import invites
from testing import fixtures, people
from testing.lessons import hive_tips, propose
from testing.machines import Fleet, Machine, make_key, one_line_error, share_file


def _v1_member(machine: str, person: str, name: str, admission: dict[str, Any] | None = None,
               active: bool = True) -> dict[str, Any]:
    """A member record exactly as the code before 2026-12 wrote it (role member, no gesture, no heads)."""
    record = {"type": "member", "machine": machine, "person": person, "name": name, "role": "member",
              "active": active, "emails": [], "ts": now_ms()}
    if admission is not None:
        record["admission"] = admission
    return record


def _append(m: Machine, record: dict[str, Any], log: str = "roster", scope: dict[str, Any] | None = None) -> None:
    logs.append(m.repo, make_key(m), m.team_id, log, scope or TEAM_SCOPE, record)


def _v1_team(fleet: Fleet, remote: Path) -> tuple[Machine, Machine, str]:
    """alice founds and owns the project, bob joins with her invite and is confirmed: all v1 records."""
    alice, bob = fleet.machine("a", remote), fleet.machine("b", remote)
    key = make_key(alice)
    team_id, me = os.urandom(16).hex(), make_key(alice).verify_key.encode().hex()
    ops._configure(alice.repo, alice.repo, team_id, me)
    logs.append(alice.repo, key, team_id, "roster", TEAM_SCOPE, _v1_member(me, "alice", "a", {"via": "founder"}))
    _append(alice, {"type": "team", "name": "old-team", "founder": me})
    project = _project_id(alice)
    _append(alice, {"type": "project-member", "project": project, "person": "alice", "role": "owner",
                    "confirmed": True})  # the v1 rule: the first self-declared owner of a project without one
    code = invites.InviteCode(team_id, me, invites.new_secret())
    _append(alice, {"type": "invite", "id": code.invite_id, "key": code.key().verify_key.encode().hex(),
                    "reusable": False, "expires": now_ms() + 86_400_000})
    alice.ok("sync")
    ops.join_hive(bob.clone, code.encode(), None)
    bob_id = make_key(bob).verify_key.encode().hex()
    bob.ok("sync")
    admission = {"via": "invite", "invite": code.invite_id, "proof": invites.prove(code, bob_id, "bob")}
    _append(bob, _v1_member(bob_id, "bob", "b", admission))
    _append(bob, {"type": "project-member", "project": project, "person": "bob", "role": "member",
                  "confirmed": False})
    bob.ok("sync")
    alice.ok("sync")
    _append(alice, {"type": "project-member", "project": project, "person": "bob", "role": "member",
                    "confirmed": True})
    share_file([alice, bob])
    lesson = propose(bob, "Run make gen after editing api.proto")
    _review(alice, lesson)
    for m in (alice, bob, alice):
        m.ok("sync")
    return alice, bob, lesson


def _project_id(m: Machine) -> str:
    from gitive.team.projects import project_id

    return project_id(m.repo)


def _review(m: Machine, lesson: str, **extra: Any) -> None:
    """A review record as the old code wrote it: no gesture."""
    _append(m, {"type": "review", "about": lesson, "approver": m.name.replace("a", "alice").replace("b", "bob"),
                "approved": True, "note": "", **extra}, log="project", scope={"project": _project_id(m)})


@pytest.fixture
def old_team(tmp_path: Path) -> tuple[Machine, Machine, str]:
    return _v1_team(Fleet(tmp_path / "fleet"), fixtures.init_bare(tmp_path / "remote.git"))


def test_an_old_team_reads_the_same_and_is_told_to_create_person_keys(old_team: tuple[Machine, Machine, str]
                                                                      ) -> None:
    alice, bob, lesson = old_team
    listed = alice.ok("team", "--json")
    members = {m["person"]: (m["role"], m["active"]) for m in listed.json()["members"]}
    assert members == {"alice": ("member", True), "bob": ("member", True)}
    assert "gitive person init" in listed.err and "gitive team migrate" in listed.err
    assert alice.json("lessons", "show", lesson)["state"] == "verified"
    assert bob.json("project")["people"]["bob"]["confirmed"] is True
    assert len(listed.err.strip().splitlines()) == 1  # one line, once


def test_migrating_keeps_old_reviews_and_then_requires_gestures(old_team: tuple[Machine, Machine, str]) -> None:
    alice, bob, lesson = old_team
    for m in (alice, bob):
        people.person_key(m.home)
        assert "Registered it" in m.decided("person", "register").out
        m.ok("sync")
    alice.ok("sync")
    one_line_error(bob.decide("team", "migrate"), "only an admin")  # in a v1 team, the founder's person is
    migrated = alice.decided("team", "migrate", "--json").json()
    assert migrated["without_key"] == []
    assert set(migrated["heads"]) == {alice.id, bob.id}
    bob.ok("sync")
    # old reviews stay valid up to the migration point
    assert bob.json("lessons", "show", lesson)["state"] == "verified"
    # a review written the old way after it does not count …
    later = propose(bob, "Protos are linted by buf before they are merged")
    bob.ok("sync")
    alice.ok("sync")
    _review(alice, later)
    alice.ok("sync")
    assert alice.json("lessons", "show", later)["state"] == "proposed"
    # … one signed with alice's registered key does, and the notice is gone
    done = alice.decided("review", "approve", later)
    assert "approved" in done.out and done.err == ""
    assert alice.json("lessons", "show", later)["state"] == "verified"
    assert alice.ok("team").err == ""


def test_a_second_migration_or_one_by_a_non_admin_changes_nothing(old_team: tuple[Machine, Machine, str]) -> None:
    alice, bob, _ = old_team
    for m in (alice, bob):
        people.person_key(m.home)
        m.decided("person", "register")
        m.ok("sync")
    alice.ok("sync")
    alice.decided("team", "migrate")
    before = hive_tips(alice)
    one_line_error(alice.decide("team", "migrate"), "nothing to migrate")
    assert hive_tips(alice) == before


def test_before_migrating_a_person_key_registered_by_an_agent_first_is_flagged(
        old_team: tuple[Machine, Machine, str]) -> None:
    _alice, bob, _ = old_team
    # an agent on bob's machine registers a key of its own making before bob does (trust on first use) …
    from testing.builders import person_signer

    agent = person_signer("agent")
    record = ops.person_key_record(bob.team_id, bob.id, "bob", agent)
    _append(bob, record)
    bob.ok("sync")
    # … bob's own key then cannot register without an endorsement, and every command says the registered key
    # is not his
    people.person_key(bob.home)
    refused = bob.decide("person", "register")
    assert refused.code == 1 and "needs an endorsement" in refused.err
    shown = bob.ok("team")
    assert "is not the one in this home" in shown.err
