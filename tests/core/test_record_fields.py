"""Every field type of every record kind, both ways: a record holding every field at a good value passes, and
each field at a value just outside its type is refused with InvalidRecord (mutation testing found most field
types exercised by no record at all: a flipped enum test or a renamed type survived)."""

from __future__ import annotations

from typing import Any

import pytest

from gitive.core import records
from gitive.core.records import fields, kinds
from gitive.errors import InvalidRecord

M = "ab" * 32
EPOCH = "cd" * 32

GOOD: dict[str, list[Any]] = {
    "str": ["", "x"],
    "int": [0, -records.MAX_INT, records.MAX_INT],
    "bool": [True, False],
    "list": [[], [1]],
    "dict": [{}, {"a": 1}],
    "machine": [M],
    "name": ["alice", "a-1"],
    "hex": [EPOCH],
    "role": list(records.ROLES),
    "lesson-kind": list(records.LESSON_KINDS),
    "project-role": list(records.PROJECT_ROLES),
    "ulid": ["01ARZ3NDEKTSV4RRFFQ69G5FAV"],
    "ack-state": ["delivered", "read"],
    "obligation-state": list(records.OBLIGATION_STATES),
    "firing-reason": list(records.FIRING_REASONS),
    "verdict": list(records.VERDICTS),
    "routing-outcome": list(records.ROUTING_OUTCOMES),
    "actor": list(records.ACTORS),
    "gate-branch": list(records.GATE_BRANCHES),
    "urgency": list(records.URGENCIES),
    "prepared-state": list(records.PREPARED_STATES),
    "standing-state": list(records.STANDING_STATES),
    "gesture": [{"key": M, "sig": "0f" * 64}],
    "decided": [{"at": 1, "n": 1}],
    "heads": [{}, {"team": 0, "project-0123456789abcdef": 7}],
    "machine-heads": [{}, {M: {"roster": 2}}, {f"{i:064x}": {} for i in range(4096)}],  # at most 4,096
    "format-version": [1, records.MAX_INT],
    "sealed-boxes": [{}, {M: "Ym94", EPOCH: "eA=="}, {f"{i:064x}": "x" for i in range(4096)}],
}

BAD: dict[str, list[Any]] = {
    "str": [1, None, b"x"],
    "int": [True, 1.0, "1", records.MAX_INT + 1, -records.MAX_INT - 1],
    "bool": [1, 0, "true", None],
    "list": [{}, (), "x"],
    "dict": [[], "x", None],
    "machine": ["AB" * 32, "ab" * 31, None],
    "name": ["Alice", "", "a" * 65, None],
    "hex": [EPOCH.upper(), EPOCH[:-1], 7],
    "ulid": ["01ARZ3NDEKTSV4RRFFQ69G5FA", "01arz3ndektsv4rrffq69g5fav", "01ARZ3NDEKTSV4RRFFQ69G5FAI", 1],
    "gesture": [{"key": M}, {"key": M, "sig": "0f" * 64, "x": 1}, {"key": M, "sig": "0F" * 64},
                {"key": M, "sig": "0f" * 63}, {"key": "zz", "sig": "0f" * 64}, {"key": M, "sig": 5}, "x"],
    "decided": [{"at": 0, "n": 1}, {"at": 1}, [1, 1]],
    "heads": [{"nope": 1}, {"team": -1}, {"team": True}, {"team": "1"}, {"project-0123": 1}, ["team"]],
    "machine-heads": [{"zz": {}}, {M: {"nope": 1}}, {M: {"team": -1}}, [],
                      {f"{i:064x}": {} for i in range(4097)}],
    "format-version": [0, -1, True, "2", records.MAX_INT + 1],
    "sealed-boxes": [{"zz": "x"}, {M: ""}, {M: 1}, [], {f"{i:064x}": "x" for i in range(4097)}],
}
ENUMS = ("role", "lesson-kind", "project-role", "ack-state", "obligation-state", "firing-reason", "verdict",
         "routing-outcome", "actor", "gate-branch", "urgency", "prepared-state", "standing-state")
for _enum in ENUMS:  # another enum's values, another case, and what is no string at all
    BAD[_enum] = ["nope", GOOD[_enum][0].upper() if GOOD[_enum][0].upper() != GOOD[_enum][0] else "X", None, 1]


def _full(kind: str, pick: int = 0) -> dict[str, Any]:
    """A record of ``kind`` with every field, optional ones too, each at a good value of its type."""
    out: dict[str, Any] = {"type": kind}
    for name, (ftype, _) in kinds.FIELDS[kind].items():
        values = GOOD[ftype]
        out[name] = values[pick % len(values)]
    return out


def test_every_field_type_has_good_and_bad_values_here() -> None:
    used = {ftype for table in kinds.FIELDS.values() for ftype, _ in table.values()}
    assert used == set(GOOD), "a field type without good values in this test (or one no kind uses)"
    assert used == set(BAD)


@pytest.mark.parametrize("kind", records.KINDS)
def test_every_kind_with_every_field_passes(kind: str) -> None:
    for pick in range(4):
        assert records.check_record(_full(kind, pick), caps=False) == kind


@pytest.mark.parametrize("ftype", sorted(GOOD))
def test_every_good_value_of_a_type_passes_and_every_bad_one_is_refused(ftype: str) -> None:
    for value in GOOD[ftype]:
        assert fields.type_ok(ftype, value) is True, (ftype, value)
    for value in BAD[ftype]:
        assert fields.type_ok(ftype, value) is False, (ftype, value)
    # and through check_record, in every kind that has a field of this type
    for kind, table in kinds.FIELDS.items():
        for name, (field_type, _) in table.items():
            if field_type != ftype:
                continue
            for value in GOOD[ftype]:
                assert records.check_record({**_full(kind), name: value}, caps=False) == kind
            for value in BAD[ftype]:
                with pytest.raises(InvalidRecord, match=f"bad `{name}` \\(expected {ftype}\\)"):
                    records.check_record({**_full(kind), name: value}, caps=False)


def test_an_unknown_field_type_is_a_programming_error() -> None:
    with pytest.raises(AssertionError, match="unknown field type"):
        fields.type_ok("colour", "red")


def test_string_sizes_are_measured_in_utf8_bytes_at_the_cap() -> None:
    """The shortcut (a string of n characters is at most 4n bytes) holds exactly at the cap, and a string over
    it in bytes but not in characters is measured."""
    cap = records.field_cap("invite", "note", "str")
    assert cap == 1024
    base = {"type": "invite", "id": EPOCH, "key": M, "reusable": False, "expires": 1}
    assert records.check_record({**base, "note": "a" * 256}) == "invite"  # 256 * 4 == cap: not measured
    assert records.check_record({**base, "note": "\U0001f600" * 256}) == "invite"  # exactly 1,024 bytes
    with pytest.raises(InvalidRecord, match="1,028 bytes, over its cap of 1,024"):
        records.check_record({**base, "note": "\U0001f600" * 257})
    assert records.check_record({**base, "note": "a" * 1024}) == "invite"  # measured: 1,024 bytes
    with pytest.raises(InvalidRecord, match="1,025 bytes"):
        records.check_record({**base, "note": "a" * 1025})
    with pytest.raises(InvalidRecord, match="1,026 bytes"):
        records.check_record({**base, "note": "é" * 513})  # 513 characters, 1,026 bytes
    assert records.check_record({**base, "note": "é" * 512}) == "invite"


def test_project_log_is_the_prefix_and_sixteen_hex_digits() -> None:
    assert records.project_log(EPOCH) == "project-" + EPOCH[:16]
    assert records.is_log_name(records.project_log(EPOCH))
    assert not records.is_log_name("project-" + EPOCH[:15])
    assert not records.is_log_name("project-" + EPOCH[:17])


def test_refusals_say_exactly_what_is_wrong() -> None:
    with pytest.raises(InvalidRecord) as refused:
        records.check_record(["team"])
    assert str(refused.value) == "a record must be an object with a string `type`"
    with pytest.raises(InvalidRecord) as refused:
        records.check_record({"type": "rumour"})
    assert str(refused.value) == f"unknown record kind 'rumour'; known kinds: {', '.join(sorted(records.KINDS))}"
    with pytest.raises(InvalidRecord) as refused:
        records.check_record({**_full("verdict"), "zeta": 1, "alpha": 2})
    assert str(refused.value) == "verdict record has unknown fields: alpha, zeta"  # never `type`
    with pytest.raises(InvalidRecord) as refused:
        records.check_entry("entry")
    assert str(refused.value) == "a log entry must be an object"
    with pytest.raises(InvalidRecord) as refused:
        records.check_log_name("wiki")
    assert str(refused.value) == ("unknown log 'wiki'; logs are roster, team, project, mail, ledger, personal and "
                                  "project-<16 hex>")


def test_a_project_log_name_is_lowercase_hex() -> None:
    assert not records.is_log_name("project-" + "X" * 16)
    assert not records.is_log_name("project-0123456789ABCDEF")
    assert records.is_log_name("project-0123456789abcdef")


def _entry(**changes: Any) -> dict[str, Any]:
    body = {"v": 2, "author": M, "log": "team", "scope": {"team": True}, "seq": 2, "at": 1, "prev": EPOCH,
            "record": {"type": "team", "name": "t", "founder": M}}
    return {k: v for k, v in {**body, **changes}.items() if v is not None}


@pytest.mark.parametrize(("entry", "words"), [
    ({"v": 2, "note": 1}, "a v2 log entry has exactly the fields at, author, log, record, scope, seq, v and `prev` "
                          "above seq 1"),
    ({"prev": None, "v": None, "note": 1}, "a v1 log entry has exactly the fields at, author, log, record, scope, seq"),
    ({"author": "me"}, "entry author is not a machine id"),
    ({"seq": 1}, "entry at seq 1 has a `prev`: the first entry of a log has none"),
    ({"prev": "ab"}, "entry `prev` must be the previous entry's hash (64 hex digits) above seq 1"),
    ({"at": 10**13}, "entry is stamped more than a day in the future"),
    ({"seq": records.MAX_INT + 1}, "entry `seq` must be a positive integer below 2**63"),
])
def test_an_entry_is_refused_with_its_exact_reason(entry: dict[str, Any], words: str) -> None:
    with pytest.raises(InvalidRecord) as refused:
        records.check_entry(_entry(**entry), now=1)
    assert str(refused.value) == words


def test_an_entry_at_the_largest_seq_and_time_reads() -> None:
    assert records.check_entry(_entry(seq=records.MAX_INT, at=records.MAX_INT)) == "team"
    assert records.check_entry(_entry(v=None, prev=None, seq=records.MAX_INT)) == "team"


# string fields with a cap of their own (lists, objects and boxes are measured as canonical JSON: see
# tests/store/test_entry_v2.py)
_STR_CAPS = sorted(k for k in records.FIELD_CAPS if kinds.FIELDS[k[0]][k[1]][0] == "str")


@pytest.mark.parametrize(("kind", "name"), _STR_CAPS)
def test_a_string_field_with_its_own_cap_holds_exactly_that(kind: str, name: str) -> None:
    """Each override is enforced as itself, not as its type's cap: a value at the override passes, one byte
    more is refused."""
    cap = records.FIELD_CAPS[(kind, name)]
    assert cap > records.TYPE_CAPS["str"]
    record = _full(kind)
    assert records.check_record({**record, name: "a" * cap}) == kind
    with pytest.raises(InvalidRecord, match=f"`{name}` is {cap + 1:,} bytes, over its cap of {cap:,}"):
        records.check_record({**record, name: "a" * (cap + 1)})
