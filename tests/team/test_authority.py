"""The authority rules no roster test reached (mutation testing of gitive/team/authority.py found them unasserted):
the write-side refusal of a removal, seniority between two admins that removed each other, and whose person keys
count as an admin's. Written as the member who tries what only an admin may."""

from __future__ import annotations

from dataclasses import replace

import pytest

from gitive.core.roles import ADMIN, ANCHOR, MEMBER
from gitive.errors import NotAllowed
from gitive.team import authority
from gitive.team.roster_state import MemberState, Roster


def _machine(machine: str, person: str, role: str = MEMBER) -> dict[str, str]:
    return {"machine": machine, "person": person, "role": role}


ALICE, ALICE2, BOB, BOB2, ANCHOR_M = (_machine("a1", "alice", ADMIN), _machine("a2", "alice", ADMIN),
                                      _machine("b1", "bob"), _machine("b2", "bob"),
                                      _machine("x1", "anchor", ANCHOR))
TEAM = [ALICE, ALICE2, BOB, BOB2, ANCHOR_M]


def test_a_member_removing_another_persons_machine_is_refused_naming_them_and_the_admins() -> None:
    with pytest.raises(NotAllowed) as refused:
        authority.check_removal([ALICE, BOB2], TEAM, "bob", ["alice", "carol"])
    assert str(refused.value).startswith("only an admin removes another person's machines (alice); ask alice or "
                                         "carol, or remove only your own")
    with pytest.raises(NotAllowed, match=r"machines \(alice, dave\); ask an admin"):
        authority.check_removal([_machine("d1", "dave"), ALICE], TEAM, "bob", [])


def test_a_member_may_remove_its_own_machines_and_an_admin_anyones() -> None:
    authority.check_removal([BOB, BOB2], TEAM, "bob", ["alice"])
    authority.check_removal([BOB, BOB2], TEAM, "alice", ["alice"])
    authority.check_removal([ALICE2], TEAM, "alice", ["alice"])  # alice keeps a1


def test_a_removal_that_leaves_no_active_admin_is_refused() -> None:
    with pytest.raises(NotAllowed) as refused:
        authority.check_removal([ALICE, ALICE2], TEAM, "alice", ["alice"])
    assert str(refused.value) == ("that would leave the team without an active admin: make someone else an admin "
                                  "first (`gitive team role PERSON admin`)")  # the command a person types next
    # an anchor machine under the admin's person name is no admin left behind
    disguised = _machine("x2", "alice", ANCHOR)
    with pytest.raises(NotAllowed, match="without an active admin"):
        authority.check_removal([ALICE, ALICE2], [*TEAM, disguised], "alice", ["alice"])
    # a second admin left: allowed
    authority.check_removal([ALICE, ALICE2], [*TEAM, _machine("c1", "carol", ADMIN)], "alice", ["alice", "carol"])
    # a team without admins (v1, before roles) has none to lose
    authority.check_removal([ALICE, ALICE2], TEAM, "alice", [])


def _state(machine: str, person: str, role: str, depth: int, active: bool = True) -> MemberState:
    return MemberState(machine, person, person, role, active, [], 1, "s", "invite", depth)


def test_seniority_the_founder_first_then_depth_then_machine_and_an_unknown_machine_last() -> None:
    roster = Roster("t", "f", members={
        "f": _state("f", "alice", ADMIN, 0),
        "m1": _state("m1", "bob", ADMIN, 1),
        "m2": _state("m2", "carol", ADMIN, 1),
        "deep": _state("deep", "dave", ADMIN, 10**6),
    })
    assert authority.seniority(roster, "f") == (0, "f")
    assert authority.seniority(roster, "m1") < authority.seniority(roster, "m2")  # same depth: by machine id
    assert authority.seniority(roster, "m2") < authority.seniority(roster, "deep")
    assert authority.seniority(roster, "deep") < authority.seniority(roster, "stranger")
    assert authority.seniority(roster, "stranger") == (1 << 30, "stranger")


def test_admin_keys_are_every_key_of_every_admin_person_and_no_members() -> None:
    roster = Roster("t", "f", version=2, members={
        "f": _state("f", "alice", ADMIN, 0),
        "b": _state("b", "bob", MEMBER, 1),
        "gone": _state("gone", "carol", ADMIN, 1, active=False),
    }, keys={"alice": ["k1", "k2"], "bob": ["k3"], "carol": ["k4"]})
    assert authority.admin_keys(roster) == {"k1", "k2"}


def _departure(by: str, seq: int, heads: dict[str, int] | None, log: str = "roster") -> dict[str, object]:
    record: dict[str, object] = {"type": "member", "machine": "b", "person": "bob", "active": False, "role": MEMBER}
    if heads is not None:
        record["heads"] = heads
    return {"body": {"author": by, "log": log, "seq": seq, "record": record}, "by": by}


def test_a_removal_needs_heads_exactly_where_it_needs_a_gesture() -> None:
    """v1 team migrated at the remover's roster seq 5: a removal at or below it needs neither gesture nor heads,
    one above it needs both; a v2 team always does."""
    bob = _state("b", "bob", MEMBER, 1)
    v1 = Roster("t", "f", members={"f": _state("f", "alice", ADMIN, 0), "b": bob},
                migration={"f": {"roster": 5}, "b": {"roster": 1}})
    assert authority.heads_refusal(v1, _departure("f", 5, None), bob) is None
    assert authority.heads_refusal(v1, _departure("f", 5, None, log="team"), bob) == (
        "a removal or re-activation must record the machine's log heads")  # f's team log was not migrated
    assert authority.heads_refusal(v1, _departure("f", 6, None), bob) == (
        "a removal or re-activation must record the machine's log heads")
    assert authority.heads_refusal(v1, _departure("f", 6, {}), bob) is None  # an admin's removal: any heads
    v2 = Roster("t", "f", version=2, members=v1.members)
    assert authority.heads_refusal(v2, _departure("f", 1, None), bob) is not None
    assert authority.heads_refusal(v2, _departure("f", 1, {"team": 3}, log="team"), replace(bob, active=False)) \
        is None  # no change of state: nothing to record


def test_a_machines_own_departure_names_its_heads_up_to_itself() -> None:
    bob = _state("b", "bob", MEMBER, 1)
    v2 = Roster("t", "f", version=2, members={"f": _state("f", "alice", ADMIN, 0), "b": bob})
    own = "a machine's own departure must name its heads up to the departure itself"
    assert authority.heads_refusal(v2, _departure("b", 1, {}), bob) == own  # the log unnamed: seq 0 is below 1
    assert authority.heads_refusal(v2, _departure("b", 4, {"team": 9}), bob) == own
    assert authority.heads_refusal(v2, _departure("b", 4, {"roster": 3}), bob) == own
    assert authority.heads_refusal(v2, _departure("b", 4, {"roster": 4}), bob) is None


def test_a_team_without_admins_has_none_to_lose() -> None:
    """The founder's own person touches the admins (v1 founders are admins), but where there are none a change
    of the founder's machine leaves no fewer: never refused as leaving no admin."""
    roster = Roster("t", "f", version=2, members={"f": _state("f", "alice", MEMBER, 0),
                                                  "b": _state("b", "bob", MEMBER, 1)})
    assert authority.admin_persons(roster) == set()
    assert authority.leaves_no_admin(roster, "f", {"active": False, "role": MEMBER}) is False
    with_admin = Roster("t", "f", version=2, members={"f": _state("f", "alice", ADMIN, 0),
                                                      "b": _state("b", "bob", MEMBER, 1)})
    assert authority.leaves_no_admin(with_admin, "f", {"active": False, "role": ADMIN}) is True
    assert authority.leaves_no_admin(with_admin, "f", {"active": True, "role": MEMBER}) is True
    assert authority.leaves_no_admin(with_admin, "b", {"active": False, "role": MEMBER}) is False
    assert authority.admin_persons(with_admin) == {"alice"}  # the trial change is undone


def test_leaving_no_admin_is_judged_for_every_change_that_touches_one() -> None:
    # v1: the founder's person is an admin by founding; their machine leaving leaves none (no role changes)
    v1 = Roster("t", "f", members={"f": _state("f", "alice", MEMBER, 0), "b": _state("b", "bob", MEMBER, 1)})
    assert authority.admin_persons(v1) == {"alice"}
    assert authority.leaves_no_admin(v1, "f", {"active": False, "role": MEMBER}) is True
    # v2: the only admin, not the founder, demoted while active
    v2 = Roster("t", "f", version=2, members={"f": _state("f", "alice", MEMBER, 0),
                                              "c": _state("c", "carol", ADMIN, 1)})
    assert authority.leaves_no_admin(v2, "c", {"active": True, "role": MEMBER}) is True
    # two admins: demoting one leaves the other
    two = Roster("t", "f", version=2, members={"f": _state("f", "alice", ADMIN, 0),
                                               "c": _state("c", "carol", ADMIN, 1)})
    assert authority.leaves_no_admin(two, "c", {"active": True, "role": MEMBER}) is False
    assert authority.leaves_no_admin(two, "c", {"active": False, "role": ADMIN}) is False
    assert authority.admin_persons(two) == {"alice", "carol"}


def _change(by: str, machine: str, person: str, active: bool, role: str = MEMBER,
            heads: dict[str, int] | None = None) -> dict[str, object]:
    record: dict[str, object] = {"type": "member", "machine": machine, "person": person, "active": active,
                                 "role": role, "heads": heads if heads is not None else {"roster": 9}}
    return {"body": {"author": by, "log": "roster", "seq": 1, "record": record}, "by": by, "sig": f"sig-{by}"}


def _team() -> Roster:
    return Roster("t", "f", version=2, members={
        "f": _state("f", "alice", ADMIN, 0), "b1": _state("b1", "bob", MEMBER, 1),
        "b2": _state("b2", "bob", MEMBER, 1, active=False), "x": _state("x", "anchor", ANCHOR, 1)})


def test_an_anchor_signs_no_change_but_its_own_departure() -> None:
    roster = _team()
    refused = "an anchor cannot change the roster"
    assert authority.change_refusal(roster, _change("x", "b1", "bob", False), roster.members["b1"]) == refused
    assert authority.change_refusal(roster, _change("x", "b2", "bob", True), roster.members["b2"]) == refused
    assert authority.change_refusal(roster, _change("x", "x", "anchor", False, ANCHOR), roster.members["x"]) is None


def test_a_removed_machine_is_brought_back_only_by_an_admin() -> None:
    roster = _team()
    b2 = roster.members["b2"]
    assert authority.change_refusal(roster, _change("b2", "b2", "bob", True), b2) == (
        "a machine may sign its own departure but never its own return")
    assert authority.change_refusal(roster, _change("b1", "b2", "bob", True), b2) == (
        "only an admin re-activates a removed machine")  # bob's other machine: the same person, no admin
    assert authority.change_refusal(roster, _change("b1", "b1", "alice", False), roster.members["b1"]) == (
        "a machine cannot change the person it belongs to")


def test_a_member_changes_only_its_own_persons_machines_and_never_into_an_admin_or_anchor() -> None:
    roster = _team()
    roster.members["b3"] = _state("b3", "bob", ADMIN, 1, active=False)  # an admin machine of bob's, removed
    assert authority.change_refusal(roster, _change("b1", "f", "alice", False), roster.members["f"]) == (
        "only an admin removes or changes another person's machines")
    assert authority.change_refusal(roster, _change("b1", "b1", "bob", True, ADMIN), roster.members["b1"]) == (
        "only an admin makes a machine an admin")
    assert authority.change_refusal(roster, _change("b1", "b1", "bob", True, ANCHOR), roster.members["b1"]) == (
        "only an admin makes a machine an anchor")
    # keeping the removed machine's role as it was is no promotion: refused only for want of a gesture
    assert authority.change_refusal(roster, _change("b1", "b3", "bob", False, ADMIN), roster.members["b3"]) == (
        "a decision without a valid gesture by a person key")


def test_a_gesture_is_needed_exactly_past_the_migration_heads() -> None:
    v1 = Roster("t", "f", members={"f": _state("f", "alice", ADMIN, 0)}, migration={"f": {"roster": 5}})
    env = _change("f", "f", "alice", True)
    assert authority.gesture_refusal(v1, env, "alice") is None  # seq 1, at or below f's roster head 5
    env["body"]["seq"] = 6  # type: ignore[index]
    env["sig"] = "sig-f-6"
    assert authority.gesture_refusal(v1, env, "alice") == "a decision without a valid gesture by a person key"
