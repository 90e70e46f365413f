"""Which records are decisions, and the exact shape of a gesture (mutation testing found these unasserted)."""

from __future__ import annotations

from gitive.core import gesture
from testing.builders import person_signer

TEAM, MACHINE = "7e" * 16, "aa" * 32
ALICE = person_signer("alice")
REVIEW = {"type": "review", "about": "ab" * 32, "approver": "alice", "approved": True, "note": "checked"}


def test_a_project_owner_record_is_a_decision_even_unconfirmed() -> None:
    assert gesture.is_decision({"type": "project-member", "role": "owner", "confirmed": False})
    assert not gesture.is_decision({"type": "project-member", "role": "owners", "confirmed": False})


def test_a_gesture_whose_signature_is_not_a_string_is_no_gesture() -> None:
    signed = gesture.sign(ALICE, TEAM, MACHINE, REVIEW)
    for sig in (5, None, ["ab"] * 64, bytes.fromhex(signed["gesture"]["sig"])):
        assert gesture.key_of(TEAM, MACHINE, {**REVIEW, "gesture": {"key": ALICE.public, "sig": sig}}) is None


def test_a_gesture_key_must_be_the_lower_case_hex_it_is_registered_as() -> None:
    signed = gesture.sign(ALICE, TEAM, MACHINE, REVIEW)
    upper = {**signed, "gesture": {**signed["gesture"], "key": ALICE.public.upper()}}
    assert gesture.key_of(TEAM, MACHINE, upper) is None
    assert gesture.key_of(TEAM, MACHINE, signed) == ALICE.public
