"""Roster merge: admission chained to the founder, invites, last-writer-wins, departures, future stamps."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from gitive.constants import MAX_SKEW_MS
from gitive.team import roster
from testing.builders import (
    TEAM_ID,
    LogBook,
    Machine,
    founder_admission,
    invite_admission,
    invite_code,
    invite_record,
    machine,
    member_record,
    team_record,
)

NOW = 1_700_000_000_000
T0 = NOW - 30 * 86_400_000  # the team is founded a month ago
FOUNDER = machine("alice-laptop")
ALICE2 = machine("alice-desktop")
BOB = machine("bob-laptop")
BOB2 = machine("bob-desktop")
CAROL = machine("carol-laptop")
DAVE = machine("dave-laptop")
MALLORY = machine("mallory")
ANCHOR = machine("anchor")
ERIN = machine("erin")


def t(minutes: int) -> int:
    return T0 + minutes * 60_000


def founded() -> LogBook:
    book = LogBook()
    book.add(FOUNDER, team_record("acme", FOUNDER), at=t(0))
    book.add(FOUNDER, member_record(FOUNDER, "alice", t(0), name="laptop", admission=founder_admission()))
    return book


def merge(book: LogBook | list[dict[str, Any]], now: int = NOW) -> roster.Roster:
    entries = book.entries if isinstance(book, LogBook) else book
    return roster.merge(TEAM_ID, FOUNDER.id, entries, now)


def refusals(result: roster.Roster, who: Machine) -> list[str]:
    """Reasons given for refused entries about (or signed by) ``who``."""
    return [reason for env, reason in result.refused
            if env["body"]["record"].get("machine") == who.id or env["by"] == who.id]


def invite(book: LogBook, inviter: Machine, name: str, minutes: int, *, expires_in: int = 7 * 24 * 60,
           reusable: bool = False, person: str | None = None):
    code = invite_code(name, FOUNDER)
    book.add(inviter, invite_record(code, t(minutes + expires_in), reusable=reusable, person=person), at=t(minutes))
    return code


def redeem(book: LogBook, joiner: Machine, person: str, code, minutes: int, **over: Any) -> dict[str, Any]:
    admission = over.pop("admission", None) or invite_admission(code, joiner, person)
    return book.add(joiner, member_record(joiner, person, t(minutes), admission=admission, **over))


# --- admission --------------------------------------------------------------------------------------------

def test_the_founder_is_admitted() -> None:
    result = merge(founded())
    assert list(result.members) == [FOUNDER.id]
    state = result.members[FOUNDER.id]
    assert (state.person, state.name, state.via, state.depth, state.active) == ("alice", "laptop", "founder", 0, True)
    assert result.name == "acme"
    assert result.refused == []
    assert result.persons() == {"alice": [state]}


def test_nobody_else_can_claim_to_be_the_founder() -> None:
    book = founded()
    book.add(MALLORY, member_record(MALLORY, "mallory", t(1), admission=founder_admission()))
    book.add(MALLORY, member_record(FOUNDER, "mallory", t(2), admission=founder_admission()))
    result = merge(book)
    assert not result.admitted(MALLORY.id)
    assert result.members[FOUNDER.id].person == "alice"
    assert refusals(result, MALLORY)


def test_without_the_founders_entry_nobody_is_admitted() -> None:
    book = LogBook()
    code = invite(book, FOUNDER, "i", 1)
    redeem(book, BOB, "bob", code, 2)
    assert merge(book).members == {}


def test_joiner_with_an_invite_is_admitted_while_the_inviter_is_offline() -> None:
    book = founded()
    code = invite(book, FOUNDER, "bob", 5)
    # The founder writes nothing after the invite: the joiner's own signed entry is enough.
    redeem(book, BOB, "bob", code, 60, emails=["bob@example.com"])
    result = merge(book)
    assert result.admitted(BOB.id)
    state = result.members[BOB.id]
    assert (state.person, state.via, state.depth, state.emails) == ("bob", "invite", 1, ["bob@example.com"])
    assert result.refused == []
    assert result.used == {code.invite_id: BOB.id}
    assert [i.inviter for i in result.invites[code.invite_id]] == [FOUNDER.id]


def test_a_self_signed_admission_without_an_invite_is_refused() -> None:
    book = founded()
    book.add(MALLORY, member_record(MALLORY, "mallory", t(1)))
    result = merge(book)
    assert not result.admitted(MALLORY.id)
    assert refusals(result, MALLORY) == ["not admitted: no admission chains to the founder"]


def test_redeeming_an_unknown_invite_is_refused() -> None:
    book = founded()
    code = invite_code("never-recorded", FOUNDER)
    redeem(book, MALLORY, "mallory", code, 5)
    result = merge(book)
    assert not result.admitted(MALLORY.id)
    assert refusals(result, MALLORY) == ["redeems an invite this roster does not hold"]


def test_an_invite_proof_made_for_another_machine_is_refused() -> None:
    book = founded()
    code = invite(book, FOUNDER, "bob", 5)
    redeem(book, MALLORY, "bob", code, 6, admission=invite_admission(code, BOB, "bob"))
    result = merge(book)
    assert not result.admitted(MALLORY.id)
    assert refusals(result, MALLORY) == ["invite proof does not verify"]


def test_an_invite_proof_made_for_another_person_is_refused() -> None:
    book = founded()
    code = invite(book, FOUNDER, "bob", 5)
    redeem(book, BOB, "bobby", code, 6, admission=invite_admission(code, BOB, "bob"))
    assert refusals(merge(book), BOB) == ["invite proof does not verify"]


def test_an_invite_proof_without_the_secret_is_refused() -> None:
    book = founded()
    code = invite(book, FOUNDER, "bob", 5)
    admission = {"via": "invite", "invite": code.invite_id, "proof": "00" * 64}
    redeem(book, BOB, "bob", code, 6, admission=admission)
    assert not merge(book).admitted(BOB.id)


def test_an_expired_invite_is_refused() -> None:
    book = founded()
    code = invite(book, FOUNDER, "bob", 5, expires_in=60)
    redeem(book, BOB, "bob", code, 66)
    result = merge(book)
    assert not result.admitted(BOB.id)
    assert refusals(result, BOB) == ["invite had expired (or was redeemed before it existed)"]


def test_an_invite_redeemed_at_its_expiry_is_accepted() -> None:
    book = founded()
    code = invite(book, FOUNDER, "bob", 5, expires_in=60)
    redeem(book, BOB, "bob", code, 65)
    assert merge(book).admitted(BOB.id)


def test_an_invite_for_a_named_person_admits_only_that_person() -> None:
    book = founded()
    code = invite(book, FOUNDER, "for-bob", 5, person="bob", reusable=True)
    redeem(book, CAROL, "carol", code, 6)
    redeem(book, BOB, "bob", code, 7)
    result = merge(book)
    assert result.admitted(BOB.id)
    assert not result.admitted(CAROL.id)
    assert refusals(result, CAROL) == ["invite is for person 'bob'"]


def test_a_one_time_invite_used_twice_admits_only_the_earliest() -> None:
    book = founded()
    code = invite(book, FOUNDER, "once", 5)
    redeem(book, CAROL, "carol", code, 20)
    redeem(book, BOB, "bob", code, 10)
    result = merge(book)
    assert result.admitted(BOB.id)
    assert not result.admitted(CAROL.id)
    assert refusals(result, CAROL) == ["one-time invite was already used"]
    assert result.used == {code.invite_id: BOB.id}


def test_a_one_time_invite_used_twice_at_the_same_time_admits_the_lower_signature() -> None:
    book = founded()
    code = invite(book, FOUNDER, "once", 5)
    bob = redeem(book, BOB, "bob", code, 10)
    carol = redeem(book, CAROL, "carol", code, 10)
    winner, loser = (BOB, CAROL) if bob["sig"] < carol["sig"] else (CAROL, BOB)
    result = merge(book)
    assert result.admitted(winner.id)
    assert not result.admitted(loser.id)


def test_the_same_machine_may_redeem_a_one_time_invite_again() -> None:
    book = founded()
    code = invite(book, FOUNDER, "once", 5)
    redeem(book, BOB, "bob", code, 10)
    redeem(book, BOB, "bob", code, 11, name="renamed")
    result = merge(book)
    assert result.members[BOB.id].name == "renamed"
    assert refusals(result, BOB) == []


def test_a_reusable_invite_admits_several_machines() -> None:
    book = founded()
    code = invite(book, FOUNDER, "many", 5, reusable=True)
    for i, (who, person) in enumerate([(BOB, "bob"), (CAROL, "carol"), (DAVE, "dave")]):
        redeem(book, who, person, code, 10 + i)
    result = merge(book)
    assert all(result.admitted(m.id) for m in (BOB, CAROL, DAVE))
    assert result.used == {}


def test_an_invite_written_by_a_non_member_admits_nobody() -> None:
    book = founded()
    code = invite(book, MALLORY, "rogue", 5)
    redeem(book, DAVE, "dave", code, 6)
    result = merge(book)
    assert not result.admitted(DAVE.id)
    assert refusals(result, DAVE) == ["redeems an invite this roster does not hold"]
    assert refusals(result, MALLORY) == ["signer was not an active member when it signed"]


def test_a_member_may_admit_a_machine_directly() -> None:
    book = founded()
    book.add(FOUNDER, member_record(BOB, "bob", t(5)))
    book.add(BOB, member_record(DAVE, "dave", t(6)))
    result = merge(book)
    assert (result.members[BOB.id].via, result.members[BOB.id].depth) == ("member", 1)
    assert result.members[DAVE.id].depth == 2


def test_an_admin_may_admit_an_anchor_directly_but_the_anchor_admits_nobody() -> None:
    book = founded()
    book.add(FOUNDER, member_record(ANCHOR, "anchor", t(5), role="anchor"))
    book.add(ANCHOR, member_record(DAVE, "dave", t(6)))
    result = merge(book)
    assert result.members[ANCHOR.id].role == "anchor"
    assert not result.admitted(DAVE.id)
    assert refusals(result, DAVE) == ["an anchor cannot change the roster"]


def test_admission_chains_through_invitees() -> None:
    book = founded()
    first = invite(book, FOUNDER, "bob", 5)
    redeem(book, BOB, "bob", first, 6)
    second = invite(book, BOB, "carol", 7)
    redeem(book, CAROL, "carol", second, 8)
    result = merge(book)
    assert [result.members[m.id].depth for m in (FOUNDER, BOB, CAROL)] == [0, 1, 2]


def test_an_admission_may_arrive_before_the_admission_it_depends_on() -> None:
    book = founded()
    book.add(ERIN, member_record(DAVE, "dave", t(3)))  # stamped before erin herself was admitted
    book.add(FOUNDER, member_record(ERIN, "erin", t(9)))
    result = merge(book)
    assert result.admitted(DAVE.id)


# --- an existing person ------------------------------------------------------------------------------------

def test_an_existing_person_cannot_be_joined_with_another_persons_invite() -> None:
    book = founded()
    redeem(book, BOB, "bob", invite(book, FOUNDER, "bob", 5), 6)
    redeem(book, BOB2, "bob", invite(book, FOUNDER, "bob-again", 7), 8)  # alice's invite, joining as bob
    result = merge(book)
    assert not result.admitted(BOB2.id)
    assert refusals(result, BOB2) == ["person 'bob' exists; only their own machines may add machines as them"]


def test_an_existing_person_can_be_joined_with_their_own_machines_invite() -> None:
    book = founded()
    redeem(book, BOB, "bob", invite(book, FOUNDER, "bob", 5), 6)
    redeem(book, BOB2, "bob", invite(book, BOB, "bob-desktop", 7), 8)
    redeem(book, ALICE2, "alice", invite(book, FOUNDER, "alice-desktop", 9), 10)
    result = merge(book)
    assert result.admitted(BOB2.id) and result.admitted(ALICE2.id)
    assert sorted(m.machine for m in result.machines_of("bob")) == sorted([BOB.id, BOB2.id])
    assert result.person_of(BOB2.id) == "bob"
    assert list(result.persons()) == ["alice", "bob"]


# --- member state ------------------------------------------------------------------------------------------

def admitted_bob() -> LogBook:
    book = founded()
    redeem(book, BOB, "bob", invite(book, FOUNDER, "bob", 5), 6, name="laptop")
    return book


def test_member_state_is_last_writer_wins_by_ts() -> None:
    book = admitted_bob()
    book.add(FOUNDER, member_record(BOB, "bob", t(30), name="newest"))
    book.add(BOB, member_record(BOB, "bob", t(20), name="older"))
    result = merge(book)
    assert result.members[BOB.id].name == "newest"
    assert result.members[BOB.id].ts == t(30)
    assert refusals(result, BOB) == []  # an older write is superseded, not wrong


def test_member_state_ties_on_ts_are_broken_by_the_higher_signature() -> None:
    book = admitted_bob()
    a = book.add(FOUNDER, member_record(BOB, "bob", t(30), name="from-alice"))
    b = book.add(BOB, member_record(BOB, "bob", t(30), name="from-bob"))
    expected = "from-alice" if a["sig"] > b["sig"] else "from-bob"
    assert merge(book).members[BOB.id].name == expected
    assert merge(book.entries[::-1]).members[BOB.id].name == expected


def test_a_machine_may_sign_its_own_departure() -> None:
    book = admitted_bob()
    book.add(BOB, member_record(BOB, "bob", t(40), active=False))
    result = merge(book)
    state = result.members[BOB.id]
    assert not state.active
    assert result.admitted(BOB.id)  # admissions are never removed
    assert result.may_sign(BOB.id, t(39))
    assert not result.may_sign(BOB.id, t(41))


def test_a_machine_may_not_sign_its_own_return() -> None:
    book = admitted_bob()
    book.add(BOB, member_record(BOB, "bob", t(40), active=False))
    book.add(BOB, member_record(BOB, "bob", t(50), active=True))
    result = merge(book)
    assert not result.members[BOB.id].active
    assert refusals(result, BOB) == ["a machine may sign its own departure but never its own return"]


def test_a_machine_may_not_return_by_redeeming_another_invite() -> None:
    book = admitted_bob()
    book.add(BOB, member_record(BOB, "bob", t(40), active=False))
    redeem(book, BOB, "bob", invite(book, FOUNDER, "again", 45), 50)
    assert not merge(book).members[BOB.id].active


def test_a_return_signed_by_another_member_is_accepted() -> None:
    book = admitted_bob()
    book.add(BOB, member_record(BOB, "bob", t(40), active=False))
    book.add(FOUNDER, member_record(BOB, "bob", t(50), active=True))
    result = merge(book)
    assert result.members[BOB.id].active
    assert result.refused == []


def test_a_member_can_remove_another() -> None:
    book = admitted_bob()
    book.add(FOUNDER, member_record(BOB, "bob", t(40), active=False))
    result = merge(book)
    assert not result.members[BOB.id].active
    assert not result.may_sign(BOB.id, t(41))


def test_a_machine_cannot_change_its_person() -> None:
    book = admitted_bob()
    book.add(BOB, member_record(BOB, "alice", t(40)))
    result = merge(book)
    assert result.members[BOB.id].person == "bob"
    assert refusals(result, BOB) == ["a machine cannot change the person it belongs to"]


def test_a_non_member_cannot_change_a_members_state() -> None:
    book = admitted_bob()
    book.add(MALLORY, member_record(BOB, "bob", t(40), active=False))
    result = merge(book)
    assert result.members[BOB.id].active
    assert refusals(result, MALLORY) == ["signer was not an active member when it signed"]


def test_the_same_entry_twice_changes_nothing() -> None:
    book = admitted_bob()
    assert merge(book.entries + book.entries).members == merge(book).members


# --- time ---------------------------------------------------------------------------------------------------

def test_entries_stamped_more_than_a_day_ahead_are_refused() -> None:
    book = admitted_bob()
    book.add(FOUNDER, member_record(BOB, "bob", NOW + MAX_SKEW_MS + 1, name="future"), at=NOW)
    book.add(FOUNDER, member_record(BOB, "bob", t(50), name="future-at"), at=NOW + MAX_SKEW_MS + 1)
    result = merge(book)
    assert result.members[BOB.id].name == "laptop"
    assert [reason for _, reason in result.refused] == ["stamped more than a day in the future"] * 2


def test_entries_stamped_up_to_a_day_ahead_are_accepted() -> None:
    book = admitted_bob()
    book.add(FOUNDER, member_record(BOB, "bob", NOW + MAX_SKEW_MS, name="soon"), at=NOW + MAX_SKEW_MS)
    assert merge(book).members[BOB.id].name == "soon"


def test_a_future_founder_entry_admits_nobody_until_its_time() -> None:
    book = LogBook()
    book.add(FOUNDER, member_record(FOUNDER, "alice", NOW + 2 * MAX_SKEW_MS, admission=founder_admission()))
    assert merge(book).members == {}
    assert merge(book, now=NOW + 2 * MAX_SKEW_MS).admitted(FOUNDER.id)


# --- order independence ------------------------------------------------------------------------------------

def scenario() -> LogBook:
    """Every rule at once; several admissions depend on entries stamped later."""
    book = founded()
    once = invite(book, FOUNDER, "once", 5)
    redeem(book, BOB, "bob", once, 10)
    redeem(book, CAROL, "carol", once, 11)  # second use of a one-time invite
    shared = invite(book, BOB, "shared", 12, reusable=True)
    redeem(book, BOB2, "bob", shared, 13)  # bob's own machine's invite
    redeem(book, DAVE, "dave", shared, 14)
    stale = invite(book, FOUNDER, "stale", 15, expires_in=5)
    redeem(book, CAROL, "carol", stale, 30)  # expired
    redeem(book, ALICE2, "alice", shared, 16)  # bob's invite, joining as alice: refused
    book.add(ERIN, member_record(machine("erin-child"), "kid", t(17)))  # before erin's own admission
    book.add(FOUNDER, member_record(ERIN, "erin", t(20)))
    book.add(MALLORY, member_record(MALLORY, "mallory", t(21)))
    book.add(BOB, member_record(BOB, "bob", t(40), active=False))
    book.add(BOB, member_record(BOB, "bob", t(50), active=True))  # own return: refused
    book.add(FOUNDER, member_record(BOB2, "bob", t(60), name="renamed"))
    book.add(BOB2, member_record(BOB2, "bob", t(55), name="older"))
    book.add(DAVE, member_record(DAVE, "dave", t(60), name="x"))
    book.add(ERIN, member_record(DAVE, "dave", t(60), name="y"))  # same ts: the higher signature wins
    book.add(FOUNDER, member_record(DAVE, "dave", NOW + 2 * MAX_SKEW_MS, name="future"))
    return book


def digest(result: roster.Roster) -> dict[str, Any]:
    return {
        "members": {m: s.as_dict() for m, s in result.members.items()},
        "invites": dict(result.invites),
        "used": dict(result.used),
        "refused": sorted((env["sig"], reason) for env, reason in result.refused),
        "name": result.name,
    }


def test_scenario_gives_the_expected_roster() -> None:
    book = scenario()
    result = merge(book)
    ties = {env["body"]["record"]["name"]: env["sig"] for env in book.entries
            if env["body"]["record"].get("machine") == DAVE.id and env["body"]["record"]["name"] in ("x", "y")}
    assert sorted(result.members) == sorted(m.id for m in (FOUNDER, BOB, BOB2, DAVE, ERIN, machine("erin-child")))
    assert not result.members[BOB.id].active
    assert result.members[BOB2.id].name == "renamed"
    assert result.members[DAVE.id].name == max(ties, key=ties.__getitem__)
    assert len(result.refused) == 6  # carol twice, alice2, mallory, bob's return, the future entry


@given(st.permutations(scenario().entries))
def test_admissions_in_any_order_give_the_same_roster(entries: list[dict[str, Any]]) -> None:
    assert digest(merge(entries)) == digest(merge(scenario()))


def test_merge_does_not_change_its_input() -> None:
    book = scenario()
    before = repr(book.entries)
    merge(book)
    assert repr(book.entries) == before


# --- regressions: removal is judged at the time an entry was signed ----------------------------------------

def test_a_removed_machine_cannot_admit_anyone_afterwards() -> None:
    book = founded()
    redeem(book, BOB, "bob", invite(book, FOUNDER, "bob", 1), 2)
    book.add(FOUNDER, member_record(BOB, "bob", t(5), active=False))
    book.add(BOB, member_record(CAROL, "carol", t(6)))
    result = merge(book)
    assert not result.admitted(CAROL.id)


def test_an_invite_dies_with_the_machine_that_made_it() -> None:
    book = founded()
    redeem(book, BOB, "bob", invite(book, FOUNDER, "bob", 1), 2)
    code = invite(book, BOB, "for-carol", 3)
    book.add(FOUNDER, member_record(BOB, "bob", t(5), active=False))
    redeem(book, CAROL, "carol", code, 6)
    result = merge(book)
    assert not result.admitted(CAROL.id)
    assert refusals(result, CAROL) == ["the inviting machine is not (or no longer) an active member"]


def test_a_removed_machine_cannot_remove_others() -> None:
    book = founded()
    redeem(book, BOB, "bob", invite(book, FOUNDER, "bob", 1), 2)
    book.add(FOUNDER, member_record(BOB, "bob", t(5), active=False))
    book.add(BOB, member_record(FOUNDER, "alice", t(6), name="laptop", active=False))
    result = merge(book)
    assert result.members[FOUNDER.id].active


def test_a_departure_entry_never_admits_a_machine() -> None:
    book = founded()
    book.add(FOUNDER, member_record(CAROL, "carol", t(5), active=False))
    assert not merge(book).admitted(CAROL.id)


def test_a_copied_invite_id_signed_by_someone_else_does_not_block_the_real_one() -> None:
    book = founded()
    code = invite(book, FOUNDER, "bob", 5)
    fake = dict(book.entries[-1]["body"]["record"], key=MALLORY.id)
    book.add(MALLORY, fake, at=t(1))  # a non-member copies the id, stamped earlier
    redeem(book, BOB, "bob", code, 6)
    assert merge(book).admitted(BOB.id)


def test_the_team_name_is_the_founders_latest_team_record() -> None:
    book = founded()
    book.add(FOUNDER, team_record("renamed", FOUNDER), at=t(9))
    assert merge(book).name == "renamed"
    assert merge(list(reversed(book.entries))).name == "renamed"


def test_a_member_cannot_add_a_machine_under_another_existing_person() -> None:
    book = founded()
    redeem(book, BOB, "bob", invite(book, FOUNDER, "bob", 1), 2)
    book.add(FOUNDER, member_record(BOB2, "bob", t(3)))  # alice vouching a machine as bob
    assert not merge(book).admitted(BOB2.id)
    book2 = founded()
    redeem(book2, BOB, "bob", invite(book2, FOUNDER, "bob", 1), 2)
    book2.add(BOB, member_record(BOB2, "bob", t(3)))  # bob's own machine may
    assert merge(book2).admitted(BOB2.id)


def test_entries_in_one_millisecond_give_one_roster_whatever_their_signatures() -> None:
    # Founding, invite, redemption and a vouched second machine, all stamped at once (a fixed clock):
    # the signatures decide the order within the millisecond, never the outcome.
    for n in range(12):
        founder, box, desk = machine(f"f{n}"), machine(f"box{n}"), machine(f"desk{n}")
        book = LogBook()
        book.add(founder, member_record(founder, "alice", T0, admission=founder_admission()), at=T0)
        code = invite_code(f"i{n}", founder)
        book.add(founder, invite_record(code, T0 + 10**9, reusable=True), at=T0)
        admission = invite_admission(code, box, "bob")
        book.add(box, member_record(box, "bob", T0, admission=admission), at=T0)
        book.add(box, member_record(desk, "bob", T0, name="desk"), at=T0)
        result = roster.merge(TEAM_ID, founder.id, book.entries, NOW)
        assert set(result.members) == {founder.id, box.id, desk.id}, (n, result.refused)
