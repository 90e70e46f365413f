"""Signed<T>: signatures bound to team and record kind."""

from __future__ import annotations

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gitive.constants import PROTOCOL
from gitive.core import canonical, signed
from testing.builders import OTHER_TEAM_ID, TEAM_ID, machine

ALICE = machine("alice")
BOB = machine("bob")
BODY = {"author": ALICE.id, "seq": 1, "record": {"type": "team", "name": "acme", "founder": ALICE.id}}


def test_sign_returns_body_signer_and_hex_signature() -> None:
    env = signed.sign(ALICE.key, TEAM_ID, "team", BODY)
    assert set(env) == {"body", "by", "sig"}
    assert env["body"] is BODY
    assert env["by"] == ALICE.id
    assert len(env["sig"]) == 128 and int(env["sig"], 16) >= 0


def test_signature_covers_domain_and_canonical_body() -> None:
    env = signed.sign(ALICE.key, TEAM_ID, "team", BODY)
    message = f"{PROTOCOL}/{TEAM_ID}/team/".encode() + canonical.dumps(BODY)
    assert signed.domain(TEAM_ID, "team") == f"{PROTOCOL}/{TEAM_ID}/team/".encode()
    ALICE.key.verify_key.verify(message, bytes.fromhex(env["sig"]))  # raises if not


def test_signing_is_deterministic() -> None:
    assert signed.sign(ALICE.key, TEAM_ID, "team", BODY) == signed.sign(ALICE.key, TEAM_ID, "team", dict(BODY))


def test_signature_ok_accepts_an_honest_envelope() -> None:
    assert signed.signature_ok(TEAM_ID, "team", signed.sign(ALICE.key, TEAM_ID, "team", BODY))


def test_signature_ok_refuses_another_team() -> None:
    env = signed.sign(ALICE.key, TEAM_ID, "team", BODY)
    assert not signed.signature_ok(OTHER_TEAM_ID, "team", env)


def test_signature_ok_refuses_another_kind() -> None:
    env = signed.sign(ALICE.key, TEAM_ID, "team", BODY)
    assert not signed.signature_ok(TEAM_ID, "member", env)
    assert not signed.signature_ok(TEAM_ID, "invite", env)


def test_signature_ok_refuses_a_tampered_body() -> None:
    env = copy.deepcopy(signed.sign(ALICE.key, TEAM_ID, "team", BODY))
    env["body"]["record"]["name"] = "evil"
    assert not signed.signature_ok(TEAM_ID, "team", env)


def test_signature_ok_refuses_another_claimed_signer() -> None:
    env = dict(signed.sign(ALICE.key, TEAM_ID, "team", BODY))
    env["by"] = BOB.id
    assert not signed.signature_ok(TEAM_ID, "team", env)


@pytest.mark.parametrize("sig", ["", "zz" * 64, "00" * 64, "ab"], ids=["empty", "not-hex", "zeros", "short"])
def test_signature_ok_refuses_a_garbage_signature(sig: str) -> None:
    env = dict(signed.sign(ALICE.key, TEAM_ID, "team", BODY))
    env["sig"] = sig
    assert not signed.signature_ok(TEAM_ID, "team", env)


def test_key_order_of_the_body_does_not_matter() -> None:
    env = signed.sign(ALICE.key, TEAM_ID, "team", BODY)
    reordered = dict(reversed(list(BODY.items())))
    assert signed.signature_ok(TEAM_ID, "team", {**env, "body": reordered})


@given(st.dictionaries(st.text(max_size=8), st.integers() | st.text(max_size=8), max_size=6), st.data())
def test_any_single_change_to_a_body_breaks_the_signature(body: dict, data: st.DataObject) -> None:
    env = signed.sign(ALICE.key, TEAM_ID, "team", body)
    assert signed.signature_ok(TEAM_ID, "team", env)
    changed = dict(body)
    key = data.draw(st.text(max_size=8))
    changed[key] = data.draw(st.integers().filter(lambda v: v != body.get(key)))
    assert not signed.signature_ok(TEAM_ID, "team", {**env, "body": changed})
