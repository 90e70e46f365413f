"""The smaller authority holes of issue 23 (item 10), each tried as its attacker would on a real team.

- a removed machine runs ``gitive status``: it must say it was removed;
- an admin demoted to member grants project membership with their own gesture (bypassing the CLI): no count;
- a project without an owner: nobody's review counts, so a membership request (no gesture) changes nothing;
- in a team not yet migrated to person keys, a member appends a self-claim of project ownership dated before
  their admission: refused.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from gitive.core import gesture
from gitive.core.clock import now_ms
from gitive.core.records import TEAM_SCOPE
from testing import fixtures
from testing.lessons import propose
from testing.machines import Fleet, Machine, on_index, share_file
from tests.adversarial.test_authority_migration import _append, _project_id, _v1_team

DAY = 86_400_000


@pytest.fixture
def home_kept() -> Iterator[None]:
    saved = os.environ.get("GITIVE_HOME")
    yield
    if saved is not None:
        os.environ["GITIVE_HOME"] = saved


def _people(machine: Machine) -> dict[str, Any]:
    return machine.json("project")["people"]


def test_status_on_a_removed_machine_says_it_was_removed(tmp_path: Any, home_kept: None) -> None:
    alice, bob = Fleet(tmp_path / "fleet").team(fixtures.init_bare(tmp_path / "r.git"), ("alice", "a"), ("bob", "b"))
    assert bob.json("status")["standing"] == {"removed": False}
    alice.decided("team", "remove", "bob/b")
    alice.ok("sync")
    bob.ok("sync")
    assert bob.json("status")["standing"]["removed"] is True
    assert "was removed from the team" in bob.ok("status").out
    assert alice.json("status")["standing"] == {"removed": False}


def test_a_demoted_admin_grants_nothing(tmp_path: Any, home_kept: None) -> None:
    fleet = Fleet(tmp_path / "fleet")
    alice, bob, carol = fleet.team(fixtures.init_bare(tmp_path / "r.git"), ("alice", "a"), ("bob", "b"),
                                   ("carol", "c"))
    alice.decided("team", "role", "bob", "admin")
    alice.ok("sync")
    bob.ok("sync")
    bob.decided("project", "confirm", "carol")  # while an admin: counts
    bob.ok("sync")
    alice.ok("sync")
    assert _people(alice)["carol"]["confirmed"] is True
    alice.decided("team", "role", "bob", "member")
    for m in (alice, bob, carol):
        m.ok("sync")
    refused = bob.decide("project", "confirm", "carol", "--owner")
    assert refused.code == 1  # the CLI says no; the attack writes the grant itself, with bob's own gesture

    def grant(hive: Any, conn: Any) -> None:
        record = {"type": "project-member", "project": hive.project_id, "person": "carol", "role": "owner",
                  "confirmed": True}
        bob.append(gesture.sign(bob.signer, hive.team_id, hive.me, record), "roster")
    on_index(bob, grant)
    bob.ok("sync")
    alice.ok("sync")
    assert _people(alice)["carol"]["role"] == "member"  # bob's grant as an admin still stands; this one not
    assert _people(alice)["carol"]["confirmed"] is True


def test_a_project_without_an_owner_counts_no_review(tmp_path: Any, home_kept: None) -> None:
    alice, bob = Fleet(tmp_path / "fleet").team(fixtures.init_bare(tmp_path / "r.git"), ("alice", "a"), ("bob", "b"))
    share_file([alice, bob])
    # the repository moved: its id follows the URL, so this is a project nobody owns or joined yet
    moved = str(tmp_path / "moved.git")
    fixtures.run_git(["clone", "--quiet", "--bare", str(tmp_path / "r.git"), moved], cwd=tmp_path)
    for m in (alice, bob):
        m.git("remote", "set-url", "origin", moved)
    lesson = propose(bob, "Run make gen after editing api.proto")
    bob.ok("sync")
    alice.ok("sync")
    refused = alice.decide("review", "approve", lesson)
    assert refused.code == 1 and "no owner" in refused.err + refused.out

    def approve(hive: Any, conn: Any) -> None:  # written anyway: readers must not count it
        record = {"type": "review", "about": lesson, "approver": "alice", "approved": True, "note": "",
                  "scope": {"project": hive.project_id}}
        alice.append(gesture.sign(alice.signer, hive.team_id, hive.me, record), "team")
    on_index(alice, approve)
    alice.ok("sync")
    bob.ok("sync")
    assert bob.json("lessons", "show", lesson)["state"] == "proposed"
    # a membership request needs no gesture: before, it turned the lesson from verified back to proposed
    bob.append({"type": "project-member", "project": _project_id(bob), "person": "bob", "role": "member",
                "confirmed": False}, "roster")
    bob.ok("sync")
    assert bob.json("lessons", "show", lesson)["state"] == "proposed"
    alice.decided("project", "confirm", "alice", "--owner")  # an admin grants an owner: reviews count
    alice.decided("review", "approve", lesson)
    alice.ok("sync")
    bob.ok("sync")
    assert bob.json("lessons", "show", lesson)["state"] == "verified"


def test_a_backdated_self_claim_in_a_pre_migration_team_is_refused(tmp_path: Any, home_kept: None) -> None:
    fleet = Fleet(tmp_path / "fleet")
    alice, bob, _ = _v1_team(fleet, fixtures.init_bare(tmp_path / "remote.git"))
    project = _project_id(bob)
    assert _people(bob)["alice"]["role"] == "owner"
    # bob's agent (machine key, no person key needed in a v1 team) claims ownership, dated a day before he joined
    from gitive.store import logs
    from testing.machines import make_key

    logs.append(bob.repo, make_key(bob), bob.team_id, "roster", TEAM_SCOPE,
                {"type": "project-member", "project": project, "person": "bob", "role": "owner", "confirmed": True},
                at=now_ms() - DAY)
    bob.ok("sync")
    alice.ok("sync")
    for m in (alice, bob):
        people = _people(m)
        assert people["alice"]["role"] == "owner" and people["bob"]["role"] == "member", people
    assert _append  # the same v1 writer the migration tests use
