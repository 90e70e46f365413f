"""Canonical JSON: one byte form per value, strict parsing."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gitive.core import canonical
from gitive.errors import InvalidRecord

# Integers that survive Python's int/str conversion limit (4,300 digits) comfortably.
ints = st.integers(min_value=-(10**30), max_value=10**30)
scalars = st.none() | st.booleans() | ints | st.text()
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(), children, max_size=5),
    max_leaves=30,
)


@given(json_values)
def test_dumps_loads_round_trip(value: Any) -> None:
    data = canonical.dumps(value)
    assert canonical.loads(data) == value
    assert canonical.dumps(canonical.loads(data)) == data


@given(json_values)
def test_dumps_is_sorted_and_compact(value: Any) -> None:
    expected = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    assert canonical.dumps(value) == expected


@given(st.dictionaries(st.text(), ints, max_size=8))
def test_key_order_does_not_change_the_bytes(value: dict[str, int]) -> None:
    reordered = dict(reversed(list(value.items())))
    assert canonical.dumps(reordered) == canonical.dumps(value)


@given(json_values)
def test_dumps_trusted_matches_dumps_for_loaded_values(value: Any) -> None:
    data = canonical.dumps(value)
    assert canonical.dumps_trusted(canonical.loads(data)) == data


def test_dumps_exact_bytes() -> None:
    assert canonical.dumps({"b": [1, {"d": None, "c": True}], "a": "x"}) == b'{"a":"x","b":[1,{"c":true,"d":null}]}'


def test_non_ascii_is_kept_as_utf8() -> None:
    data = canonical.dumps({"name": "Zoë 日本 🐝"})
    assert data == '{"name":"Zoë 日本 🐝"}'.encode()
    assert b"\\u" not in data
    assert canonical.loads(data) == {"name": "Zoë 日本 🐝"}


@pytest.mark.parametrize("value", [1.5, 0.0, float("nan"), float("inf"), {"a": [1, 2.0]}, [{"x": -0.1}]])
def test_dumps_refuses_floats(value: Any) -> None:
    with pytest.raises(InvalidRecord, match="float"):
        canonical.dumps(value)


@pytest.mark.parametrize("value", [b"bytes", (1, 2), {1, 2}, object(), {1: "int key"}, {"a": {None: 1}}])
def test_dumps_refuses_values_json_cannot_carry(value: Any) -> None:
    with pytest.raises(InvalidRecord):
        canonical.dumps(value)


def test_dumps_error_names_the_path() -> None:
    with pytest.raises(InvalidRecord, match=r"\$\.a\[1\]"):
        canonical.dumps({"a": [1, 2.5]})


@pytest.mark.parametrize(
    "text",
    [
        b"1.0",
        b"1e3",
        b'{"a": 0.5}',
        b"NaN",
        b"Infinity",
        b"-Infinity",
        b'[1, NaN]',
        b'{"a": 1, "a": 2}',
        b'{"x": {"k": 1, "k": 1}}',
    ],
)
def test_loads_refuses_floats_nan_and_duplicate_keys(text: bytes) -> None:
    with pytest.raises(InvalidRecord):
        canonical.loads(text)


@pytest.mark.parametrize("text", [b"", b"{", b"\xff\xfe\xfd", b"[1,]", b"{'a': 1}", b"tru"])
def test_loads_refuses_non_json(text: bytes) -> None:
    with pytest.raises(InvalidRecord, match="not valid JSON"):
        canonical.loads(text)


def test_loads_refuses_deep_nesting_without_crashing() -> None:
    with pytest.raises(InvalidRecord):
        canonical.loads(b"[" * 100_000 + b"]" * 100_000)


def test_loads_accepts_str_and_bytes() -> None:
    assert canonical.loads('{"a":[1,"é"]}') == canonical.loads('{"a":[1,"é"]}'.encode()) == {"a": [1, "é"]}


@given(st.binary(max_size=200))
def test_loads_random_bytes_only_raise_invalid_record(data: bytes) -> None:
    with contextlib.suppress(InvalidRecord):  # any other exception fails the test
        canonical.loads(data)


@given(st.text(alphabet='{}[]":,0123456789.eE+-truefalsn \\u', max_size=60))
def test_loads_json_like_text_only_raises_invalid_record(text: str) -> None:
    with contextlib.suppress(InvalidRecord):  # any other exception fails the test
        canonical.loads(text)


@given(json_values)
def test_loads_canonical_accepts_exactly_the_canonical_bytes(value: Any) -> None:
    data = canonical.dumps(value)
    assert canonical.loads_canonical(data) == value
    pretty = json.dumps(value, indent=1, sort_keys=False).encode()
    if pretty != data:
        with pytest.raises(InvalidRecord):
            canonical.loads_canonical(pretty)


@pytest.mark.parametrize(
    "text",
    [b'{"b":1,"a":2}', b'{"a": 1}', b' {"a":1}', b'{"a":1}\n', b'{"a":1,"a":1}', b'{"a":"\\u00e9"}', b'[1.0]',
     b'NaN', b'{"a":1', b"\xef\xbb\xbf{}"],
    ids=["unsorted", "space", "leading-space", "trailing-newline", "duplicate", "escaped-non-ascii", "float",
         "nan", "truncated", "bom"],
)
def test_loads_canonical_refuses_other_forms(text: bytes) -> None:
    with pytest.raises(InvalidRecord):
        canonical.loads_canonical(text)


class _Str(str):
    pass


# Values the quick check must leave to the full one: floats, tuples, sets, bytes, non-string keys, subclasses.
odd_leaves = st.floats(allow_nan=False) | st.tuples(ints) | st.frozensets(ints, max_size=2) | st.binary(max_size=3) \
    | st.text(max_size=3).map(_Str)
odd_values = st.recursive(
    scalars | odd_leaves,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=3) | ints | st.booleans(), children, max_size=4),
    max_leaves=20,
)


@given(odd_values)
def test_the_quick_check_agrees_with_the_full_one(value: Any) -> None:
    # _plain is the fast path of _check: it may only say yes where the full walk finds nothing wrong.
    try:
        canonical._check_each(value)
        full = True
    except InvalidRecord:
        full = False
    if canonical._plain(value):
        assert full, value
    try:
        canonical._check(value)
        checked = True
    except InvalidRecord:
        checked = False
    assert checked is full


def test_a_cycle_is_still_refused() -> None:
    value: list[Any] = []
    value.append(value)
    assert not canonical._plain(value)
    with pytest.raises(RecursionError):
        canonical.dumps(value)
