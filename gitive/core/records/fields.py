"""Field types: what each type named in a kind's table (``"hex"``, ``"role"``, ``"gesture"``, ...) accepts.
The enumerations live with their record family; the types every family shares (actors, integers) live here."""

from __future__ import annotations

import re
from typing import Any

from gitive.core import decisions
from gitive.core.ids import is_hex64, is_machine_id, is_name
from gitive.core.records.gate import GATE_BRANCHES, URGENCIES
from gitive.core.records.lessons import LESSON_KINDS
from gitive.core.records.logs import is_log_name
from gitive.core.records.mail import ACK_STATES
from gitive.core.records.obligations import FIRING_REASONS, OBLIGATION_STATES, ROUTING_OUTCOMES, VERDICTS
from gitive.core.records.prepared import PREPARED_STATES, STANDING_STATES
from gitive.core.records.projects import PROJECT_ROLES
from gitive.core.records.roster import ROLES

ACTORS = ("agent", "person")
MAX_INT = 2**63 - 1  # what SQLite and every JSON reader hold exactly
_SIG = re.compile(r"[0-9a-f]{128}")
_ULID = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}")

# The common field types checked without the dispatch below (the hot read path checks every entry); a type
# not listed here is checked by the dispatch in type_ok.
FAST: dict[str, Any] = {
    "str": lambda v: isinstance(v, str),
    "bool": lambda v: isinstance(v, bool),
    "list": lambda v: isinstance(v, list),
    "dict": lambda v: isinstance(v, dict),
    "hex": is_hex64,
    "machine": is_machine_id,
    "name": is_name,
}


def _gesture_ok(value: Any) -> bool:
    return (isinstance(value, dict) and set(value) == {"key", "sig"} and is_hex64(value["key"])
            and isinstance(value["sig"], str) and bool(_SIG.fullmatch(value["sig"])))


def _heads_ok(value: Any) -> bool:
    """``{log name: seq}``: every name a known log or project log, every seq a non-negative integer."""
    return isinstance(value, dict) and all(
        is_log_name(k) and isinstance(v, int) and not isinstance(v, bool) and v >= 0 for k, v in value.items())


def type_ok(kind: str, value: Any) -> bool:
    """Whether ``value`` is of field type ``kind``."""
    fast = FAST.get(kind)
    if fast is not None:
        return bool(fast(value))
    match kind:
        case "int":
            return isinstance(value, int) and not isinstance(value, bool) and -MAX_INT <= value <= MAX_INT
        case "role":
            return value in ROLES
        case "lesson-kind":
            return value in LESSON_KINDS
        case "project-role":
            return value in PROJECT_ROLES
        case "ulid":
            return isinstance(value, str) and bool(_ULID.fullmatch(value))
        case "ack-state":
            return value in ACK_STATES
        case "obligation-state":
            return value in OBLIGATION_STATES
        case "firing-reason":
            return value in FIRING_REASONS
        case "verdict":
            return value in VERDICTS
        case "routing-outcome":
            return value in ROUTING_OUTCOMES
        case "actor":
            return value in ACTORS
        case "gate-branch":
            return value in GATE_BRANCHES
        case "urgency":
            return value in URGENCIES
        case "prepared-state":
            return value in PREPARED_STATES
        case "standing-state":
            return value in STANDING_STATES
        case "gesture":
            return _gesture_ok(value)
        case "decided":
            return decisions.is_stamp(value)
        case "heads":
            return _heads_ok(value)
        case "machine-heads":
            return (isinstance(value, dict) and len(value) <= 4096
                    and all(is_machine_id(k) and _heads_ok(v) for k, v in value.items()))
        case "format-version":  # a later version's records still read (refused when opened), never malformed
            return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_INT
        case "sealed-boxes":  # {machine or epoch id: base64 box}, at most 4,096 of them
            return (isinstance(value, dict) and len(value) <= 4096
                    and all(is_hex64(k) and isinstance(v, str) and v for k, v in value.items()))
    raise AssertionError(f"unknown field type {kind}")
