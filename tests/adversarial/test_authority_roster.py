"""Authority rules under attack (docs/verification.md §3): each rule, tried by someone who can push anything.

The attacker holds machine keys (a member's, a removed member's, an anchor's) and can sign whatever records
and claim whatever time, but holds no person's passphrase: their person keys are their own, never another's.
Every test reads the result through the index projections a reader uses (``testing.index``).
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gitive.core.records import project_log
from gitive.team import roster as rosters
from testing import index
from testing.authority import NOW, PROJECT, TEAM_ID, Team, t
from testing.builders import machine, member_record, person_signer

FEW = settings(max_examples=25)
# When a hostile entry claims to be written: long before the team existed, around the removal, or later.
WHEN = st.sampled_from([-10_000, -1, 0, 1, 29, 30, 31, 60, 10_000])


def _team() -> tuple[Team, Any, Any]:
    team = Team()
    return team, team.join("bob-laptop", "bob", 5), team.join("carol-laptop", "carol", 10)


def _build(team: Team) -> Any:
    return index.build(team.entries, TEAM_ID, team.founder.id)


def _active(conn: Any) -> dict[str, bool]:
    return {p: bool(a) for p, a in conn.execute("SELECT person, MAX(active) FROM members GROUP BY person")}


# --- status by position ------------------------------------------------------------------------------------

@FEW
@given(before=st.integers(0, 3), after=st.integers(1, 4), when=st.lists(WHEN, min_size=4, max_size=4),
       log=st.sampled_from(["team", "project", project_log(PROJECT)]))
def test_a_removed_machines_entries_past_its_heads_never_count(before: int, after: int, when: list[int],
                                                               log: str) -> None:
    team, bob, carol = _team()
    early = [team.lesson(bob, f"before {n}", 20 + n) for n in range(before)]
    carols = team.lesson(carol, "carol's lesson", 21)
    team.remove(team.founder, bob, 30)
    # in any log, a project log the removed machine never wrote before the removal too
    late = [team.lesson(bob, f"after {n}", when[n % 4], log=log) for n in range(after)]
    for n, lesson in enumerate(late):  # even reviewed by an admin, they stay invisible
        team.review(team.founder, lesson, 40 + n)
        team.cite(bob, carols, f"s{n}", when[n % 4])  # and the removed machine's citations count for nothing
    team.review(bob, carols, when[0])  # nor does its backdated review
    conn = _build(team)
    assert [index.state(conn, lesson) for lesson in early] == ["proposed"] * before
    assert [index.state(conn, lesson) for lesson in late] == [None] * after
    assert (index.state(conn, carols), index.stats(conn, carols)) == ("proposed", (0, 0))
    assert _active(conn)["bob"] is False


@FEW
@given(when=WHEN)
def test_a_re_activation_does_not_revive_what_was_written_while_removed(when: int) -> None:
    team, bob, _ = _team()
    team.remove(team.founder, bob, 30)
    while_removed = team.lesson(bob, "written while removed", when)
    record = member_record(bob, "bob", t(50), name="bob-laptop")
    record["heads"] = team.heads(bob)  # an admin re-activates bob, naming his heads as seen now
    team.add(team.founder, record, at=t(50))
    after = team.lesson(bob, "written after", 60)
    conn = _build(team)
    assert _active(conn)["bob"] is True
    assert index.state(conn, while_removed) is None
    assert index.state(conn, after) == "proposed"


def test_a_re_activation_without_heads_is_refused() -> None:
    team, bob, _ = _team()
    team.remove(team.founder, bob, 30)
    team.set_role(team.founder, bob, "member", 50)  # active again, but without heads
    assert _active(_build(team))["bob"] is False


# --- roles ---------------------------------------------------------------------------------------------------

@FEW
@given(signer=st.sampled_from(["bob", "carol"]), target=st.sampled_from(["alice", "bob", "carol"]),
       when=WHEN, role=st.sampled_from(["member", "admin", "anchor"]))
def test_only_an_admin_removes_or_promotes_another_persons_machine(signer: str, target: str, when: int,
                                                                    role: str) -> None:
    team, bob, carol = _team()
    by = {"bob": bob, "carol": carol}[signer]
    victim = {"alice": team.founder, "bob": bob, "carol": carol}[target]
    if target != signer:
        team.remove(by, victim, when)
    team.set_role(by, by, role, when + 1)  # nobody makes themselves an admin or an anchor
    conn = _build(team)
    active = _active(conn)
    assert active[target] is True or target == signer
    roles = dict(conn.execute("SELECT person, role FROM members"))
    assert (roles["alice"], roles[signer]) == ("admin", "member")


@FEW
@given(steps=st.lists(st.tuples(st.sampled_from(["remove", "member", "admin"]),
                                st.sampled_from(["alice", "bob", "carol"]),
                                st.sampled_from(["alice", "bob", "carol"])), min_size=1, max_size=6))
def test_no_sequence_of_changes_leaves_the_team_without_an_admin(steps: list[tuple[str, str, str]]) -> None:
    team, bob, carol = _team()
    who = {"alice": team.founder, "bob": bob, "carol": carol}
    for n, (action, signer, target) in enumerate(steps):
        if action == "remove":
            team.remove(who[signer], who[target], 30 + n)
        else:
            team.set_role(who[signer], who[target], action, 30 + n)
    conn = _build(team)
    admins = {r[0] for r in conn.execute("SELECT person FROM members WHERE role = 'admin' AND active = 1")}
    assert admins, steps


def test_two_admins_removing_each_other_unseen_leave_the_senior_one() -> None:
    team, bob, _ = _team()
    team.set_role(team.founder, bob, "admin", 20)
    alice_heads = team.heads(team.founder)
    bob_heads = team.heads(bob)
    team.remove(bob, team.founder, 31, heads=alice_heads)  # bob backdates nothing; neither saw the other
    team.remove(team.founder, bob, 30, heads=bob_heads)
    for order in (team.entries, team.entries[::-1]):
        conn = index.build(order, TEAM_ID, team.founder.id)
        assert _active(conn) == {"alice": True, "bob": False, "carol": True}


# --- anchors -------------------------------------------------------------------------------------------------

def test_an_anchor_machine_decides_nothing_even_with_an_admins_key() -> None:
    team, bob, carol = _team()
    anchor = team._machine("anchor", "anchor")
    team.keys["anchor"] = team.keys["alice"]  # say it got hold of a copy of alice's person key
    team.add(team.founder, member_record(anchor, "anchor", t(15), name="anchor", role="anchor"), at=t(15))
    lesson = team.lesson(bob, "the anchor may not verify this", 20)
    team.review(anchor, lesson, 21, approver="alice")
    team.remove(anchor, carol, 22, heads={})
    team.set_role(anchor, bob, "admin", 23)
    team.tombstone(anchor, team.lesson(carol, "nor retract this", 24), 25)
    team.add(anchor, {"type": "project-member", "project": "ab" * 32, "person": "bob", "role": "owner",
                      "confirmed": True}, at=t(26))
    conn = _build(team)
    assert dict(conn.execute("SELECT person, role FROM members WHERE machine = ?", (anchor.id,))) == {
        "anchor": "anchor"}
    assert index.state(conn, lesson) == "proposed"
    assert _active(conn)["carol"] is True
    assert dict(conn.execute("SELECT person, role FROM members"))["bob"] == "member"
    assert conn.execute("SELECT COUNT(*) FROM tombstones WHERE applied = 1").fetchone()[0] == 0
    from gitive.index import projects

    assert projects.owners(conn, "ab" * 32) == set()


def test_an_anchor_may_leave_but_nobody_may_take_its_name() -> None:
    team, bob, _ = _team()
    anchor = team._machine("anchor", "anchor")
    team.add(team.founder, member_record(anchor, "anchor", t(15), name="anchor", role="anchor"), at=t(15))
    team.role[anchor.id] = "anchor"
    team.add(bob, member_record(bob, "anchor", t(16), name="bob-laptop"), at=t(16))  # bob renames himself
    team.remove(anchor, anchor, 20, signed=False)  # no person key: its own departure needs none
    conn = _build(team)
    assert dict(conn.execute("SELECT person, active FROM members WHERE role = 'anchor'")) == {"anchor": 0}
    assert dict(conn.execute("SELECT machine, person FROM members"))[bob.id] == "bob"


# --- gestures ------------------------------------------------------------------------------------------------

@FEW
@given(forgery=st.sampled_from(["none", "own-key-for-other", "stranger-key", "copied", "other-record"]))
def test_a_review_counts_only_with_its_approvers_registered_key(forgery: str) -> None:
    team, bob, carol = _team()
    lesson = team.lesson(bob, "reviewed by carol", 20)
    honest = team.review(team.founder, team.lesson(bob, "reviewed by alice", 19), 20)
    if forgery == "none":
        team.review(carol, lesson, 21, signed=False)
    elif forgery == "own-key-for-other":  # carol's machine writes alice's approval with carol's own key
        team.review(carol, lesson, 21, approver="alice")
    elif forgery == "stranger-key":
        team.review(carol, lesson, 21, signer=person_signer("mallory"))
    elif forgery == "copied":  # alice's real gesture, copied into carol's log
        record = {"type": "review", "about": lesson, "approver": "carol", "approved": True, "note": "",
                  "gesture": honest["body"]["record"]["gesture"]}
        team.add(carol, record, log="team", at=t(21), signed=False)
    else:  # carol's gesture over another record
        other = team.review(carol, team.lesson(bob, "another", 18), 19)
        record = {"type": "review", "about": lesson, "approver": "carol", "approved": True, "note": "",
                  "gesture": other["body"]["record"]["gesture"]}
        team.add(carol, record, log="team", at=t(21), signed=False)
    conn = _build(team)
    assert index.state(conn, lesson) == "proposed"
    team.review(carol, lesson, 30)
    assert index.state(_build(team), lesson) == "verified"


def test_a_second_person_key_needs_an_endorsement() -> None:
    team, bob, _ = _team()
    agent_key = person_signer("agent-on-bobs-machine")
    team.add(bob, team.key_record(bob, t(20), signer=agent_key), signed=False, at=t(20))
    lesson = team.lesson(team.founder, "bob's agent may not approve this", 21)
    team.review(bob, lesson, 22, signer=agent_key)
    conn = _build(team)
    assert [k for (k,) in conn.execute("SELECT key FROM person_keys WHERE person = 'bob'")] == [
        team.keys["bob"].public]
    assert index.state(conn, lesson) == "proposed"


# --- projects ------------------------------------------------------------------------------------------------

@FEW
@given(when=WHEN, grant_by=st.sampled_from(["self", "carol"]))
def test_project_ownership_is_never_claimed_by_a_timestamp(when: int, grant_by: str) -> None:
    team, bob, carol = _team()
    project = "ab" * 32
    grant = {"type": "project-member", "project": project, "person": "alice", "role": "owner", "confirmed": True}
    team.add(team.founder, grant, at=t(12))
    claim = {"type": "project-member", "project": project, "person": "bob", "role": "owner", "confirmed": True}
    team.add(bob if grant_by == "self" else carol, claim, at=t(when))
    conn = _build(team)
    from gitive.index import projects

    assert projects.owners(conn, project) == {"alice"}
    assert projects.people(conn, project)["bob"]["confirmed"] is False


def test_an_owner_grants_ownership_and_membership_counts_for_reviews() -> None:
    team, bob, _carol = _team()
    project = "cd" * 32
    team.add(team.founder, {"type": "project-member", "project": project, "person": "bob", "role": "owner",
                            "confirmed": True}, at=t(12))
    team.add(bob, {"type": "project-member", "project": project, "person": "carol", "role": "member",
                   "confirmed": True}, at=t(13))
    from gitive.index import projects

    conn = _build(team)
    assert projects.owners(conn, project) == {"bob"}
    assert projects.confirmed(conn, project) == {"bob", "carol"}


# --- stats ---------------------------------------------------------------------------------------------------

def test_citations_from_unknown_or_removed_machines_move_no_stats() -> None:
    team, bob, carol = _team()
    lesson = team.lesson(bob, "cited", 20)
    stranger = machine("stranger")
    team.person[stranger.id] = "stranger"
    for n in range(5):
        team.cite(stranger, lesson, f"x{n}", 21 + n)
    team.cite(carol, lesson, "c1", 21)
    team.cite(carol, lesson, "c1", 22)  # the same session twice counts once
    team.remove(team.founder, carol, 30)
    team.cite(carol, lesson, "c2", 1)  # past carol's heads, backdated
    assert index.stats(_build(team), lesson) == (1, 1)


# --- order independence and incremental == rebuild --------------------------------------------------------

def _scenario() -> Team:
    team, bob, carol = _team()
    team.set_role(team.founder, bob, "admin", 15)
    lesson = team.lesson(carol, "scenario lesson", 16)
    team.review(bob, lesson, 17)
    team.remove(bob, carol, 30)
    team.lesson(carol, "too late", 2)
    team.review(carol, lesson, 3, approved=False)
    team.cite(bob, lesson, "b1", 31)
    return team


def _digest(conn: Any) -> dict[str, Any]:
    return index.projections(conn)


@settings(max_examples=20)
@given(st.permutations(_scenario().entries))
def test_any_order_of_entries_gives_the_same_projections(entries: list[dict[str, Any]]) -> None:
    team = _scenario()
    assert _digest(index.build(entries, TEAM_ID, team.founder.id)) == _digest(_build(team))


@settings(max_examples=20)
@given(st.permutations(_scenario().entries), st.integers(1, 20))
def test_an_index_fed_in_two_ingests_equals_a_rebuild(entries: list[dict[str, Any]], cut: int) -> None:
    team = _scenario()
    conn = index.build(entries[:cut], TEAM_ID, team.founder.id)
    index.build(entries[cut:], TEAM_ID, team.founder.id, conn)
    assert _digest(conn) == _digest(_build(team))


def test_the_roster_merge_alone_matches_what_the_index_shows() -> None:
    team = _scenario()
    merged = rosters.merge(TEAM_ID, team.founder.id, team.book("roster").entries, NOW)
    conn = _build(team)
    assert {m: s.active for m, s in merged.members.items()} == dict(conn.execute("SELECT machine, active = 1 "
                                                                                 "FROM members"))
