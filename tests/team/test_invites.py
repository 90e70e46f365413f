"""Invite codes: encoding, damaged codes, and the joiner's proof bound to machine and person."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gitive.core.ids import blake3_hex
from gitive.errors import InviteError
from gitive.team import invites
from testing.builders import OTHER_TEAM_ID, TEAM_ID, invite_code, machine

FOUNDER = machine("founder")
JOINER = machine("joiner")
OTHER = machine("other")
CODE = invite_code("one", FOUNDER)

hex_of = lambda n: st.binary(min_size=n, max_size=n).map(bytes.hex)  # noqa: E731


@given(hex_of(16), hex_of(32), st.binary(min_size=16, max_size=16))
def test_encode_parse_round_trip(team_id: str, founder: str, secret: bytes) -> None:
    code = invites.InviteCode(team_id, founder, secret)
    text = code.encode()
    assert text.startswith(invites.PREFIX)
    assert text == text.lower() and "=" not in text
    assert invites.parse(text) == code


def test_parse_tolerates_surrounding_white_space_and_upper_case() -> None:
    text = CODE.encode()
    assert invites.parse(f"  {text}\n") == CODE
    assert invites.parse(invites.PREFIX + text[len(invites.PREFIX):].upper()) == CODE


def test_the_code_is_plain_to_copy() -> None:
    text = CODE.encode()
    assert set(text[len(invites.PREFIX):]) <= set("abcdefghijklmnopqrstuvwxyz234567")
    assert len(text) == len(invites.PREFIX) + 109  # 68 bytes (team, founder, secret, checksum) in base32


def test_new_secrets_are_random_and_sixteen_bytes() -> None:
    a, b = invites.new_secret(), invites.new_secret()
    assert len(a) == len(b) == 16 and a != b


def test_invite_id_and_key_derive_from_the_secret() -> None:
    assert CODE.invite_id == invites.invite_id(CODE.secret) == blake3_hex(CODE.secret)
    assert CODE.key().encode() == invites.invite_key(CODE.secret).encode()
    other = invite_code("two", FOUNDER)
    assert other.invite_id != CODE.invite_id
    assert other.key().encode() != CODE.key().encode()
    assert CODE.key().verify_key.encode().hex() != CODE.invite_id  # the id does not reveal the key
    assert CODE.secret.hex() not in CODE.invite_id


@pytest.mark.parametrize("text", ["", "hello", "gitve-abc", "GITIVE-" + CODE.encode()[7:], CODE.encode()[1:]])
def test_parse_refuses_text_that_is_not_an_invite(text: str) -> None:
    with pytest.raises(InviteError, match="not a gitive invite code") as info:
        invites.parse(text)
    assert "gitive-" in str(info.value) and "ask for a new one" in str(info.value)


@pytest.mark.parametrize(
    "damage",
    [
        lambda t: t[:-1],
        lambda t: t[:-8],
        lambda t: t + "a",
        lambda t: t + "aaaaaaaa",
        lambda t: t[:40] + "!" + t[41:],
        lambda t: t[:40] + "1" + t[41:],  # 1 is not in the base32 alphabet
        lambda t: t[:40] + "é" + t[41:],
        lambda t: t[:40] + " " + t[40:],
        lambda t: invites.PREFIX,
    ],
    ids=["last-char-cut", "eight-cut", "one-extra", "eight-extra", "punctuation", "digit-one", "non-ascii",
         "space-inside", "prefix-only"],
)
def test_damaged_codes_give_a_clear_invite_error(damage) -> None:
    with pytest.raises(InviteError, match="damaged") as info:
        invites.parse(damage(CODE.encode()))
    assert "copy it again or ask for a new one" in str(info.value)


def test_proof_verifies_for_its_machine_and_person() -> None:
    proof = invites.prove(CODE, JOINER.id, "bob")
    pub = CODE.key().verify_key.encode().hex()
    assert invites.proof_ok(TEAM_ID, CODE.invite_id, pub, JOINER.id, "bob", proof)


def test_proof_is_bound_to_machine_person_team_and_invite() -> None:
    proof = invites.prove(CODE, JOINER.id, "bob")
    pub = CODE.key().verify_key.encode().hex()
    other = invite_code("two", FOUNDER)
    other_pub = other.key().verify_key.encode().hex()
    assert not invites.proof_ok(TEAM_ID, CODE.invite_id, pub, OTHER.id, "bob", proof)  # another machine
    assert not invites.proof_ok(TEAM_ID, CODE.invite_id, pub, JOINER.id, "carol", proof)  # another person
    assert not invites.proof_ok(OTHER_TEAM_ID, CODE.invite_id, pub, JOINER.id, "bob", proof)  # another team
    assert not invites.proof_ok(TEAM_ID, other.invite_id, pub, JOINER.id, "bob", proof)  # another invite id
    assert not invites.proof_ok(TEAM_ID, CODE.invite_id, other_pub, JOINER.id, "bob", proof)  # another key


def test_a_proof_needs_the_secret() -> None:
    forged = invites.InviteCode(TEAM_ID, FOUNDER.id, b"\x00" * 16)
    proof = invites.prove(forged, JOINER.id, "bob")
    pub = CODE.key().verify_key.encode().hex()
    assert not invites.proof_ok(TEAM_ID, CODE.invite_id, pub, JOINER.id, "bob", proof)


@pytest.mark.parametrize("proof", ["", "zz", "00" * 64, None])
def test_proof_ok_never_raises_on_garbage(proof) -> None:
    pub = CODE.key().verify_key.encode().hex()
    assert not invites.proof_ok(TEAM_ID, CODE.invite_id, pub, JOINER.id, "bob", proof)
    assert not invites.proof_ok(TEAM_ID, CODE.invite_id, "not-a-key", JOINER.id, "bob", "00" * 64)


def test_a_mistyped_code_is_caught_by_its_checksum() -> None:
    text = CODE.encode()
    i = len(invites.PREFIX) + 20
    typo = text[:i] + ("a" if text[i] != "a" else "b") + text[i + 1:]
    with pytest.raises(InviteError, match="checksum"):
        invites.parse(typo)
