"""The cryptography of sealed scopes (``gitive.core.sealing``): what opens with which key, and what never does."""

from __future__ import annotations

import base64

from hypothesis import given, settings
from hypothesis import strategies as st

from gitive.core import sealing
from testing.builders import machine

_KEYS = st.binary(min_size=32, max_size=32)
_MACHINES = st.sampled_from([machine(f"m{i}") for i in range(6)])


@settings(max_examples=60, deadline=None)
@given(key=_KEYS, other=_KEYS, to=_MACHINES, reader=_MACHINES)
def test_an_epoch_key_opens_only_for_its_recipient_and_only_as_itself(key: bytes, other: bytes, to, reader) -> None:
    box = sealing.seal_key_to(to.id, key)
    opened = sealing.open_key(reader.key, box, sealing.epoch_id(key))
    assert opened == (key if reader.id == to.id else None)
    # a box of another key under this epoch's id (a false claim) never passes for this epoch's key
    assert sealing.open_key(to.key, sealing.seal_key_to(to.id, other), sealing.epoch_id(key)) == (
        key if other == key else None)


@settings(max_examples=60, deadline=None)
@given(key=_KEYS, old=_KEYS, wrong=_KEYS)
def test_a_wrapped_key_opens_under_the_newer_key_only(key: bytes, old: bytes, wrong: bytes) -> None:
    box = sealing.wrap(key, old)
    assert sealing.unwrap(key, box, sealing.epoch_id(old)) == old
    assert sealing.unwrap(key, box, sealing.epoch_id(wrong)) == (old if wrong == old else None)
    if wrong != key:
        assert sealing.unwrap(wrong, box, sealing.epoch_id(old)) is None


@settings(max_examples=60, deadline=None)
@given(key=_KEYS, wrong=_KEYS, text=st.text(max_size=300), flip=st.integers(0, 10_000))
def test_a_sealed_record_opens_with_its_key_untouched_and_with_nothing_else(key: bytes, wrong: bytes, text: str,
                                                                             flip: int) -> None:
    record = {"type": "citation", "lesson": "ab" * 32, "session": text, "success": True, "tests_passed": True,
              "reverted": False}
    box = sealing.seal_record(key, "cd" * 32, "personal", record)
    assert sealing.open_record(key, box) == {"v": 1, "author": "cd" * 32, "log": "personal", "record": record}
    if wrong != key:
        assert sealing.open_record(wrong, box) is None
    raw = bytearray(base64.b64decode(box))
    raw[flip % len(raw)] ^= 1 + flip % 255
    assert sealing.open_record(key, base64.b64encode(bytes(raw)).decode()) is None
    assert sealing.open_record(key, "not base64!") is None


@given(key=_KEYS, other=_KEYS, body=st.binary(max_size=500))
def test_sealed_bodies_and_their_names(key: bytes, other: bytes, body: bytes) -> None:
    hash_ = "ef" * 32
    name = sealing.body_name(key, hash_)
    assert name == sealing.body_name(key, hash_) and len(name) == 64 and name != hash_
    assert (sealing.body_name(other, hash_) == name) == (other == key)
    blob = sealing.seal_body(key, body)
    assert sealing.open_body(key, blob) == body
    assert len(blob) == len(body) + 40  # nonce and tag: the only size it adds (docs/scopes.md)
    if other != key:
        assert sealing.open_body(other, blob) is None


def test_the_epoch_id_is_a_derivation_not_the_key() -> None:
    key = bytes(range(32))
    assert sealing.epoch_id(key) == sealing.epoch_id(key) and key.hex() != sealing.epoch_id(key)
    assert len({sealing.epoch_id(sealing.new_key()) for _ in range(50)}) == 50
