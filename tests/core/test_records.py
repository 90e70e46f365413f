"""Record shapes and log-entry checks applied before anything is signed."""

from __future__ import annotations

from typing import Any

import pytest

from gitive.constants import LOG_NAMES, MAX_SKEW_MS
from gitive.core import records
from gitive.errors import InvalidRecord
from testing.builders import machine

M = machine("m").id
N = machine("n").id
HEX = "ab" * 32


def team(**over: Any) -> dict[str, Any]:
    return {"type": "team", "name": "acme", "founder": M, **over}


def member(**over: Any) -> dict[str, Any]:
    return {"type": "member", "machine": M, "person": "alice", "name": "laptop", "role": "member",
            "active": True, "emails": ["a@example.com"], "ts": 5, **over}


def invite(**over: Any) -> dict[str, Any]:
    return {"type": "invite", "id": HEX, "key": N, "reusable": False, "expires": 10, **over}


def entry(**over: Any) -> dict[str, Any]:
    return {"author": M, "log": "roster", "scope": {"team": True}, "seq": 1, "at": 1_000, "record": team(),
            **over}


def _without(record: dict[str, Any], field: str) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k != field}


VALID = [
    ("team", team()),
    ("team", team(name="")),  # the team name is free text
    ("member", member()),
    ("member", member(role="anchor", active=False, emails=[])),
    ("member", member(admission={"via": "founder"})),
    ("member", member(person="a", name="x-1-" + "z" * 60)),
    ("invite", invite()),
    ("invite", invite(reusable=True, person="bob", note="for bob's laptop")),
]


@pytest.mark.parametrize(("kind", "record"), VALID, ids=[f"{k}-{i}" for i, (k, _) in enumerate(VALID)])
def test_check_record_accepts_valid_records(kind: str, record: dict[str, Any]) -> None:
    assert records.check_record(record) == kind


INVALID = [
    ("not-a-dict", ["team"], "string `type`"),
    ("no-type", {"name": "x"}, "string `type`"),
    ("type-not-str", {"type": 1}, "string `type`"),
    ("unknown-kind", {"type": "gossip"}, "unknown record kind"),
    ("team-missing-founder", _without(team(), "founder"), "missing `founder`"),
    ("team-founder-not-machine", team(founder="alice"), "bad `founder`"),
    ("team-name-not-str", team(name=3), "bad `name`"),
    ("team-extra", team(color="red"), "unknown fields: color"),
    ("member-missing-ts", _without(member(), "ts"), "missing `ts`"),
    ("member-ts-bool", member(ts=True), "bad `ts`"),
    ("member-ts-float", member(ts=1.0), "bad `ts`"),
    ("member-ts-str", member(ts="5"), "bad `ts`"),
    ("member-machine-upper", member(machine=M.upper()), "bad `machine`"),
    ("member-machine-short", member(machine=M[:-1]), "bad `machine`"),
    ("member-person-upper", member(person="Alice"), "bad `person`"),
    ("member-person-space", member(person="al ice"), "bad `person`"),
    ("member-person-empty", member(person=""), "bad `person`"),
    ("member-person-long", member(person="a" * 65), "bad `person`"),
    ("member-name-underscore", member(name="lap_top"), "bad `name`"),
    ("member-role", member(role="owner"), "bad `role`"),
    ("member-active-int", member(active=1), "bad `active`"),
    ("member-emails-str", member(emails="a@example.com"), "bad `emails`"),
    ("member-admission-list", member(admission=["founder"]), "bad `admission`"),
    ("member-extra", member(admin=True), "unknown fields: admin"),
    ("invite-id-short", invite(id="ab"), "bad `id`"),
    ("invite-id-upper", invite(id=HEX.upper()), "bad `id`"),
    ("invite-key", invite(key="k"), "bad `key`"),
    ("invite-reusable-str", invite(reusable="yes"), "bad `reusable`"),
    ("invite-expires-missing", _without(invite(), "expires"), "missing `expires`"),
    ("invite-person-bad", invite(person="Bob"), "bad `person`"),
    ("invite-note-int", invite(note=1), "bad `note`"),
    ("invite-extra", invite(secret="x"), "unknown fields: secret"),
]


@pytest.mark.parametrize(("record", "message"), [(r, m) for _, r, m in INVALID], ids=[i for i, _, _ in INVALID])
def test_check_record_refuses_invalid_records(record: Any, message: str) -> None:
    with pytest.raises(InvalidRecord, match=message):
        records.check_record(record)


def test_lesson_kinds_are_core_record_kinds() -> None:
    # Every kind lives in core so a server guard that imports only gitive.store still knows it.
    for kind in ("lesson", "review", "tombstone", "project-member"):
        assert kind in records.KINDS
    assert records.check_record({"type": "tombstone", "lesson": "a" * 64, "reason": "wrong", "bodies": []}) == "tombstone"
    with pytest.raises(InvalidRecord, match="kind"):
        records.check_record({"type": "lesson", "id": "a" * 64, "kind": "Rumour", "evidence": [], "tags": [],
                              "body_hash": "b" * 64, "hearsay": False})


def test_check_entry_accepts_a_valid_entry_and_returns_the_kind() -> None:
    assert records.check_entry(entry()) == "team"
    assert records.check_entry(entry(record=member(), log="team")) == "member"


@pytest.mark.parametrize("log", LOG_NAMES)
def test_check_entry_accepts_every_known_log(log: str) -> None:
    records.check_entry(entry(log=log))


@pytest.mark.parametrize("scope", [{"team": True}, {"project": HEX}, {"personal": "alice"}])
def test_check_entry_accepts_each_scope(scope: dict[str, Any]) -> None:
    records.check_entry(entry(scope=scope))


@pytest.mark.parametrize(
    "scope",
    [
        {},
        {"team": False},
        {"team": 1},
        {"team": True, "personal": "alice"},
        {"project": "ab"},
        {"project": 5},
        {"personal": "Alice"},
        {"personal": ""},
        {"everyone": True},
        ["team"],
        "team",
        None,
    ],
)
def test_check_entry_refuses_a_bad_scope(scope: Any) -> None:
    with pytest.raises(InvalidRecord, match="bad scope"):
        records.check_entry(entry(scope=scope))


@pytest.mark.parametrize("log", ["", "Roster", "lessons", "roster/x", None, 1])
def test_check_entry_refuses_a_bad_log_name(log: Any) -> None:
    with pytest.raises(InvalidRecord, match="unknown log"):
        records.check_entry(entry(log=log))


def test_check_entry_refuses_unknown_or_missing_fields() -> None:
    with pytest.raises(InvalidRecord, match="exactly the fields"):
        records.check_entry({**entry(), "note": "x"})
    with pytest.raises(InvalidRecord, match="exactly the fields"):
        records.check_entry(_without(entry(), "seq"))
    with pytest.raises(InvalidRecord, match="must be an object"):
        records.check_entry([entry()])


@pytest.mark.parametrize("author", ["alice", M.upper(), M + "0", 5, None])
def test_check_entry_refuses_an_author_that_is_not_a_machine_id(author: Any) -> None:
    with pytest.raises(InvalidRecord, match="author"):
        records.check_entry(entry(author=author))


@pytest.mark.parametrize("field", ["seq", "at"])
@pytest.mark.parametrize("value", [0, -1, True, "1", 1.0, None])
def test_check_entry_refuses_seq_and_at_that_are_not_positive_ints(field: str, value: Any) -> None:
    with pytest.raises(InvalidRecord, match=f"`{field}` must be a positive integer"):
        records.check_entry(entry(**{field: value}))


def test_check_entry_refuses_entries_stamped_more_than_a_day_ahead() -> None:
    now = 1_700_000_000_000
    assert records.check_entry(entry(at=now + MAX_SKEW_MS), now=now) == "team"  # exactly a day: allowed
    with pytest.raises(InvalidRecord, match="future"):
        records.check_entry(entry(at=now + MAX_SKEW_MS + 1), now=now)
    assert records.check_entry(entry(at=now + MAX_SKEW_MS + 1)) == "team"  # no clock given: not checked


def test_check_entry_checks_the_record() -> None:
    with pytest.raises(InvalidRecord, match="unknown fields"):
        records.check_entry(entry(record=team(extra=1)))
