"""What an entry's row keeps of its envelope: the whole signed bytes only for the roster (the merge re-checks
them), and for every other log just the record (the signed bytes stay in git; the background signature check
reads them by commit). Below ``entries`` and the schema steps, which both cut envelopes down this way."""

from __future__ import annotations

import json

from gitive.core import canonical
from gitive.store.logs import Entry

FULL_ENVELOPE_LOGS = ("roster",)
_RECORD_KEY = b',"record":'
_SCOPE_KEY = b',"scope":{'


def stored_envelope(entry: Entry) -> str:
    """What the ``envelope`` column keeps of ``entry``: the record only, or all of a roster entry."""
    if entry.body["log"] in FULL_ENVELOPE_LOGS:
        return entry.raw.decode()
    raw = entry.raw
    if raw:
        # The record's canonical bytes are already in the stored ones: cut them out instead of encoding again.
        # Body keys sort as at, author, log, prev, record, scope, seq, v: nothing before `record` can hold the
        # text `,"record":`, and nothing after it (a checked scope, integers) can hold `,"scope":{`.
        start = raw.index(_RECORD_KEY) + len(_RECORD_KEY)
        return '{"body":{"record":' + raw[start:raw.rindex(_SCOPE_KEY)].decode() + "}}"
    return '{"body":{"record":' + canonical.dumps_trusted(entry.body["record"]).decode() + "}}"


def stored_envelope_text(log: str, envelope: str) -> str:
    """``stored_envelope`` of an envelope already in the index (whole or already cut down: kept as it is)."""
    if log in FULL_ENVELOPE_LOGS:
        return envelope
    record = json.loads(envelope)["body"]["record"]
    return '{"body":{"record":' + canonical.dumps_trusted(record).decode() + "}}"
