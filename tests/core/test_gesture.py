"""Gestures: bound to team, record kind, author machine and every field of the record."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from gitive.core import gesture
from testing.builders import person_signer

TEAM, OTHER_TEAM = "7e" * 16, "0f" * 16
ALICE_MACHINE, BOB_MACHINE = "aa" * 32, "bb" * 32
ALICE = person_signer("alice")
REVIEW = {"type": "review", "about": "ab" * 32, "approver": "alice", "approved": True, "note": "checked"}


def test_a_gesture_verifies_under_its_key() -> None:
    signed = gesture.sign(ALICE, TEAM, ALICE_MACHINE, REVIEW)
    assert signed["gesture"]["key"] == ALICE.public
    assert gesture.key_of(TEAM, ALICE_MACHINE, signed) == ALICE.public
    assert {k: v for k, v in signed.items() if k != "gesture"} == REVIEW  # the record itself is unchanged


def test_a_gesture_does_not_verify_in_another_machines_log_team_or_kind() -> None:
    signed = gesture.sign(ALICE, TEAM, ALICE_MACHINE, REVIEW)
    assert gesture.key_of(TEAM, BOB_MACHINE, signed) is None
    assert gesture.key_of(OTHER_TEAM, ALICE_MACHINE, signed) is None
    assert gesture.key_of(TEAM, ALICE_MACHINE, {**signed, "type": "tombstone"}) is None


def test_an_endorsement_covers_the_same_bytes_as_the_gesture() -> None:
    record = {"type": "person-key", "person": "alice", "key": ALICE.public, "ts": 1}
    endorser = person_signer("admin")
    both = gesture.sign(ALICE, TEAM, ALICE_MACHINE, gesture.sign(endorser, TEAM, ALICE_MACHINE, record, "endorse"))
    assert gesture.key_of(TEAM, ALICE_MACHINE, both) == ALICE.public
    assert gesture.key_of(TEAM, ALICE_MACHINE, both, "endorse") == endorser.public


def test_decisions_are_the_kinds_of_the_contract() -> None:
    assert gesture.is_decision(REVIEW)
    assert gesture.is_decision({"type": "project-member", "role": "member", "confirmed": True})
    assert not gesture.is_decision({"type": "project-member", "role": "member", "confirmed": False})
    assert not gesture.is_decision({"type": "lesson"})


_values = st.one_of(st.text(max_size=8), st.integers(-5, 5), st.booleans())


@given(field=st.sampled_from(sorted(REVIEW)), value=_values)
def test_changing_any_field_breaks_the_gesture(field: str, value: Any) -> None:
    signed = gesture.sign(ALICE, TEAM, ALICE_MACHINE, REVIEW)
    changed = {**signed, field: value}
    if changed[field] != signed[field]:
        assert gesture.key_of(TEAM, ALICE_MACHINE, changed) is None


@given(junk=st.one_of(st.none(), _values, st.dictionaries(st.sampled_from(["key", "sig", "x"]), _values)))
def test_a_malformed_gesture_is_no_gesture(junk: Any) -> None:
    assert gesture.key_of(TEAM, ALICE_MACHINE, {**REVIEW, "gesture": junk}) is None


@given(sig=st.binary(min_size=64, max_size=64))
def test_a_forged_signature_never_verifies(sig: bytes) -> None:
    forged = {**REVIEW, "gesture": {"key": ALICE.public, "sig": sig.hex()}}
    assert gesture.key_of(TEAM, ALICE_MACHINE, forged) is None
