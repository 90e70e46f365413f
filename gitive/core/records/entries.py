"""The write-time and read-time checks every log entry and its record pass: a record against its kind's fields
and caps (``check_record``), an entry's envelope fields, v1 or v2 (``check_entry``)."""

from __future__ import annotations

from typing import Any

from gitive.constants import MAX_SKEW_MS
from gitive.core.ids import is_hex64, is_machine_id
from gitive.core.records.fields import FAST, MAX_INT, type_ok
from gitive.core.records.kinds import FIELDS, field_cap
from gitive.core.records.logs import check_log_name, check_scope
from gitive.errors import InvalidRecord

ENTRY_VERSION = 2  # LogEntry format written now; v1 entries (no `v`) are still read
_V1_FIELDS = frozenset({"author", "log", "scope", "seq", "at", "record"})
_V2_FIELDS = _V1_FIELDS | {"v"}
_V2_LINKED = _V2_FIELDS | {"prev"}


def _size(value: Any, cap: int) -> int:
    """The capped size of ``value`` (any size at most ``cap`` when it is certainly under it)."""
    if isinstance(value, str):
        if len(value) * 4 <= cap:  # UTF-8 takes at most 4 bytes a character
            return len(value)
        return len(value.encode("utf-8", "surrogatepass"))
    from gitive.core import canonical

    # Only a size: no walk for floats and foreign types here, because every writer encodes the whole entry
    # with canonical.dumps right after (and readers parsed it with loads, which refuses them); a value JSON
    # cannot carry at all gets the checked encoder's own error.
    try:
        return len(canonical.dumps_trusted(value))
    except (TypeError, ValueError):
        return len(canonical.dumps(value))


_Plan = list[tuple[str, str, Any, bool, "int | None"]]
_PLANS: dict[str, _Plan] = {}


def _plan(kind: str, fields: dict[str, tuple[str, bool]]) -> _Plan:
    """Per field of ``kind``: (name, type, checker or None for type_ok, required, cap), built once a kind."""
    plan = _PLANS.get(kind)
    if plan is None:
        plan = _PLANS[kind] = [(name, ftype, FAST.get(ftype), required, field_cap(kind, name, ftype))
                               for name, (ftype, required) in fields.items()]
    return plan


def check_record(record: Any, *, caps: bool = True, within: int | None = None) -> str:
    """Validate a record; return its kind.

    Args:
        record: the record to check.
        caps: also check every field's size cap (always, except when reading a v1 entry, written before caps
            existed and bounded only by the entry cap).
        within: the size of the canonical entry the record was read from: no field of it is larger (a field's
            capped size is at most its canonical bytes), so a cap at least this size needs no measuring.

    Raises:
        InvalidRecord: unknown kind, a missing or mistyped field, a field over its cap, or an unknown field.
    """
    if not isinstance(record, dict) or not isinstance(record.get("type"), str):
        raise InvalidRecord("a record must be an object with a string `type`")
    kind = record["type"]
    fields = FIELDS.get(kind)
    if fields is None:
        raise InvalidRecord(f"unknown record kind {kind!r}; known kinds: {', '.join(sorted(FIELDS))}")
    present = 1
    for name, ftype, fast, required, cap in _plan(kind, fields):
        if name not in record:
            if required:
                raise InvalidRecord(f"{kind} record is missing `{name}`")
            continue
        present += 1
        value = record[name]
        if not (fast(value) if fast is not None else type_ok(ftype, value)):
            raise InvalidRecord(f"{kind} record has a bad `{name}` (expected {ftype}): {value!r:.80}")
        if caps and cap is not None and (within is None or cap < within) and (size := _size(value, cap)) > cap:
            raise InvalidRecord(f"{kind} record `{name}` is {size:,} bytes, over its cap of {cap:,}: shorten it")
    if present != len(record):
        extra = set(record) - set(fields) - {"type"}
        raise InvalidRecord(f"{kind} record has unknown fields: {', '.join(sorted(extra))}")
    return kind


def check_entry(entry: Any, now: int | None = None, within: int | None = None) -> str:
    """Validate a ``LogEntry`` body, v1 or v2; return its record kind.

    v2 (``v: 2``) carries ``prev`` (the previous entry's hash) at every seq above 1 and never at seq 1, and
    its record passes the field caps. v1 has neither ``v`` nor ``prev`` (docs/verification.md §1).
    ``within``: the size of the canonical bytes the entry was read from (see :func:`check_record`).

    Raises:
        InvalidRecord: any field is missing or malformed, or the entry is stamped over a day ahead.
    """
    if not isinstance(entry, dict):
        raise InvalidRecord("a log entry must be an object")
    version = entry.get("v", 1)
    if "v" in entry and (version != ENTRY_VERSION or isinstance(version, bool)):
        raise InvalidRecord(f"entry `v` must be {ENTRY_VERSION} (or absent for a v1 entry), not {version!r:.20}")
    expected = _V1_FIELDS if version == 1 else _V2_FIELDS
    keys = entry.keys()
    if not (keys == expected or (version != 1 and keys == _V2_LINKED)):
        raise InvalidRecord(f"a v{version} log entry has exactly the fields {', '.join(sorted(expected))}"
                            + (" and `prev` above seq 1" if version != 1 else ""))
    if not is_machine_id(entry["author"]):
        raise InvalidRecord("entry author is not a machine id")
    check_log_name(entry["log"])
    check_scope(entry["scope"])
    for name in ("seq", "at"):
        value = entry[name]
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_INT:
            raise InvalidRecord(f"entry `{name}` must be a positive integer below 2**63")
    if version != 1:
        if entry["seq"] == 1 and "prev" in entry:
            raise InvalidRecord("entry at seq 1 has a `prev`: the first entry of a log has none")
        if entry["seq"] > 1 and not is_hex64(entry.get("prev")):
            raise InvalidRecord("entry `prev` must be the previous entry's hash (64 hex digits) above seq 1")
    if now is not None and entry["at"] > now + MAX_SKEW_MS:
        raise InvalidRecord("entry is stamped more than a day in the future")
    return check_record(entry["record"], caps=version != 1, within=within)
