"""Ids: blake3 record ids and the shape checks for machine, team and person names."""

from __future__ import annotations

import blake3
import pytest

from gitive.core import canonical, ids


def test_record_id_is_blake3_of_the_canonical_parts() -> None:
    parts = ("author", {"team": True}, "Gotcha", "text")
    assert ids.record_id(*parts) == blake3.blake3(canonical.dumps(list(parts))).hexdigest()
    assert ids.record_id("a", "b") != ids.record_id("b", "a")
    assert ids.record_id({"x": 1, "y": 2}) == ids.record_id({"y": 2, "x": 1})
    assert len(ids.blake3_hex(b"")) == 64


@pytest.mark.parametrize("value", ["ab" * 32, "0" * 64, "0123456789abcdef" * 4])
def test_machine_ids_are_64_lowercase_hex(value: str) -> None:
    assert ids.is_machine_id(value)


@pytest.mark.parametrize("value", ["AB" * 32, "ab" * 31, "ab" * 33, "g" * 64, "", None, 5, b"ab" * 32])
def test_other_values_are_not_machine_ids(value: object) -> None:
    assert not ids.is_machine_id(value)


def test_team_ids_are_32_lowercase_hex() -> None:
    assert ids.is_team_id("7e" * 16)
    assert not ids.is_team_id("7e" * 32)
    assert not ids.is_team_id("7E" * 16)
    assert not ids.is_team_id(None)


@pytest.mark.parametrize("value", ["a", "alice", "bob-2", "a" * 64, "0", "-"])
def test_names_are_lowercase_digits_and_dashes(value: str) -> None:
    assert ids.is_name(value)


@pytest.mark.parametrize("value", ["", "Alice", "al ice", "a_b", "a.b", "a" * 65, "zoë", "a/b", None, 3])
def test_other_values_are_not_names(value: object) -> None:
    assert not ids.is_name(value)
