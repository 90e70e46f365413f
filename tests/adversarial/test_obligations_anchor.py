"""The anchor's side of authority: whatever an anchor machine signs, readers never take it as a decision.

An anchor-signed review verifies no lesson, an anchor-signed roster change changes nobody (beyond its own
departure), an anchor-signed obligation change changes nothing, and only an admin's anchor invite admits an anchor.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gitive.core.records import TEAM_SCOPE
from gitive.enrolment import ops
from gitive.store import logs
from gitive.team import roster
from testing import anchor as anchoring
from testing.builders import (
    TEAM_ID,
    LogBook,
    founder_admission,
    invite_admission,
    invite_code,
    invite_record,
    machine,
    member_record,
    team_record,
)
from testing.lessons import propose

NOW = 1_700_000_000_000
T0 = NOW - 86_400_000
FOUNDER, BOB, ANCHOR, STRANGER, ANCHOR2 = (machine(n) for n in ("alice", "bob", "anchor", "stranger", "anchor2"))


def _t(minutes: int) -> int:
    return T0 + minutes * 60_000


def _anchored() -> LogBook:
    book = LogBook()
    book.add(FOUNDER, team_record("acme", FOUNDER), at=_t(0))
    book.add(FOUNDER, member_record(FOUNDER, "alice", _t(0), admission=founder_admission()))
    bob = invite_code("bob", FOUNDER)
    book.add(FOUNDER, invite_record(bob, _t(600), person="bob"), at=_t(1))
    book.add(BOB, member_record(BOB, "bob", _t(2), admission=invite_admission(bob, BOB, "bob")))
    code = invite_code("anchor", FOUNDER)
    book.add(FOUNDER, {**invite_record(code, _t(600), person="anchor"), "role": "anchor"}, at=_t(3))
    book.add(ANCHOR, member_record(ANCHOR, "anchor", _t(4), role="anchor",
                                   admission=invite_admission(code, ANCHOR, "anchor")))
    return book


def _merge(book: LogBook) -> roster.Roster:
    return roster.merge(TEAM_ID, FOUNDER.id, book.entries, NOW)


def test_an_admins_anchor_invite_admits_the_anchor() -> None:
    result = _merge(_anchored())
    assert (result.members[ANCHOR.id].person, result.members[ANCHOR.id].role) == ("anchor", "anchor")
    assert result.refused == []


ANCHOR_WRITES = {
    "admit a stranger": lambda: member_record(STRANGER, "stranger", _t(10)),
    "remove bob": lambda: member_record(BOB, "bob", _t(10), active=False),
    "rename bob": lambda: member_record(BOB, "bob", _t(10), name="pwned"),
    "make itself a member": lambda: member_record(ANCHOR, "anchor", _t(10), role="member"),
    "invite": lambda: invite_record(invite_code("x", FOUNDER), _t(600)),
    "admit a second anchor": lambda: member_record(ANCHOR2, "anchor", _t(10), role="anchor"),
}


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from(sorted(ANCHOR_WRITES)), min_size=1, max_size=6), st.randoms())
def test_nothing_an_anchor_signs_changes_the_roster(writes: list[str], rnd: Any) -> None:
    honest = _merge(_anchored())
    book = _anchored()
    for name in writes:
        record = ANCHOR_WRITES[name]()
        book.add(ANCHOR, record, at=record.get("ts", _t(10)))
    entries = list(book.entries)
    rnd.shuffle(entries)
    result = roster.merge(TEAM_ID, FOUNDER.id, entries, NOW)
    assert {m: s.as_dict() for m, s in result.members.items()} == {m: s.as_dict() for m, s in honest.members.items()}
    assert set(result.invites) == set(honest.invites)


def test_an_anchor_may_still_sign_its_own_departure() -> None:
    book = _anchored()
    book.add(ANCHOR, member_record(ANCHOR, "anchor", _t(10), role="anchor", active=False))
    assert not _merge(book).members[ANCHOR.id].active


def test_a_person_cannot_take_the_anchor_name_nor_a_member_invite_admit_an_anchor() -> None:
    book = _anchored()
    code = invite_code("plain", FOUNDER)
    book.add(FOUNDER, invite_record(code, _t(600)), at=_t(5))
    book.add(STRANGER, member_record(STRANGER, "anchor", _t(6), role="anchor",
                                     admission=invite_admission(code, STRANGER, "anchor")))
    mallory_code = invite_code("bobs", FOUNDER)
    book.add(BOB, {**invite_record(mallory_code, _t(600), person="anchor"), "role": "anchor"}, at=_t(7))
    book.add(ANCHOR2, member_record(ANCHOR2, "anchor", _t(8), role="anchor",
                                    admission=invite_admission(mallory_code, ANCHOR2, "anchor")))
    result = _merge(book)
    assert not result.admitted(STRANGER.id) and not result.admitted(ANCHOR2.id)
    reasons = {reason for _, reason in result.refused}
    assert "an anchor joins only with an anchor invite, and an anchor invite admits only an anchor" in reasons
    assert "only an admin invites an anchor, and only as the person 'anchor'" in reasons


def test_an_anchor_signed_review_and_obligation_cancel_are_refused_by_readers(
        team: anchoring.AnchoredTeam) -> None:
    lesson = propose(team.bob, "Read the README before you start", evidence=("file:README", "commit:HEAD"))
    record = anchoring.owe(team.bob, anchoring.MERGED.format(branch="x"), "tidy up")
    team.anchor.ok("sync")
    repo, key, team_id = team.anchor.repo, team.anchor.key, team.anchor.team_id
    logs.append(repo, key, team_id, "team", TEAM_SCOPE, {"type": "review", "about": lesson, "approver": "anchor",
                                                         "approved": True, "note": "looks fine"})
    logs.append(repo, key, team_id, "team", TEAM_SCOPE, {"type": "obligation-state", "obligation": record["id"],
                                                         "state": "cancelled", "actor": "person"})
    logs.append(repo, key, team_id, "roster", TEAM_SCOPE,
                ops.member_record(team.bob.id, "bob", "bob", [], None, active=False))
    team.anchor.ok("sync")
    team.bob.ok("sync")
    shown = team.bob.json("lessons", "show", lesson[:12])
    assert shown["state"] == "proposed"
    listing = team.bob.json("owed", "--all")
    assert [o["status"] for o in listing["obligations"]] == ["open"]
    assert {"id": record["id"], "change": "cancelled", "author": "anchor",
            "problem": "an anchor cannot change an obligation"} in listing["refused"]
    members = {m["person"]: m["active"] for m in team.bob.json("team")["members"]}
    assert members["bob"] is True
