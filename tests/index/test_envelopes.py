"""What an entry's row keeps of its envelope, cut from the stored bytes, equals the record encoded again."""

from __future__ import annotations

from typing import Any

import pytest

from gitive.core import canonical, signed
from gitive.index import envelopes
from gitive.store.logs import Entry
from testing.builders import TEAM_ID, entry_body, machine

A = machine("envelope-a")
TRICKY = ',"scope":{"team":true},"record":{"type":"x"},"by":"' + "a" * 64 + '"} é \\u2028 \n "quoted"'


@pytest.mark.parametrize(("record", "scope", "prev"), [
    ({"type": "review", "about": "ab" * 32, "approver": "alice", "approved": True, "note": TRICKY},
     {"team": True}, "cd" * 32),
    ({"type": "message", "id": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "from": TRICKY, "to": "c/d", "recipients": [],
      "body": TRICKY * 3, "from_person": False}, {"project": "ef" * 32}, None),
    ({"type": "ack", "message": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "state": "read", "session": "s"},
     {"personal": "alice"}, "01" * 32),
])
def test_the_kept_record_is_cut_from_the_stored_bytes_exactly(record: dict[str, Any], scope: dict[str, Any],
                                                               prev: str | None) -> None:
    body = {"v": 2, **entry_body(A, record, log="mail", scope=scope, seq=2 if prev else 1)}
    if prev:
        body["prev"] = prev
    raw = canonical.dumps(signed.sign(A.key, TEAM_ID, record["type"], body))
    entry = Entry("0" * 40, None, canonical.loads(raw), raw)
    kept = envelopes.stored_envelope(entry)
    assert kept == '{"body":{"record":' + canonical.dumps(record).decode() + "}}"
    assert canonical.loads(kept) == {"body": {"record": record}}
    assert envelopes.stored_envelope(entry._replace(raw=b"")) == kept  # no stored bytes: encoded again


def test_a_roster_entry_keeps_its_whole_envelope() -> None:
    record = {"type": "team", "name": "acme", "founder": A.id}
    raw = canonical.dumps(signed.sign(A.key, TEAM_ID, "team", {"v": 2, **entry_body(A, record)}))
    assert envelopes.stored_envelope(Entry("0" * 40, None, canonical.loads(raw), raw)) == raw.decode()
