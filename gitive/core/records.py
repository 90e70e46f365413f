"""Record kinds and their shapes: the write-time checks every entry passes before it is signed.

The JSON Schemas in ``refs_schema/`` say the same in a machine-readable form; tests hold the two together.
"""

from __future__ import annotations

import re
from typing import Any

from gitive.constants import LOG_NAMES, MAX_SKEW_MS
from gitive.core.ids import is_hex64, is_machine_id, is_name
from gitive.errors import InvalidRecord

ROLES = ("member", "anchor")
_ULID = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}")
MAX_MESSAGE_BODY = 64 * 1024
TEAM_SCOPE: dict[str, Any] = {"team": True}  # never mutated: every team-scope entry shares it
LESSON_KINDS = ("Convention", "Correction", "Gotcha", "Decision", "Routing", "Preference")
PROJECT_ROLES = ("owner", "member")
OBLIGATION_STATES = ("done", "cancelled", "renewed")
FIRING_REASONS = ("condition", "deadline", "lapsing")
VERDICTS = ("unsatisfied", "unverifiable")
ROUTING_OUTCOMES = ("answered", "helpful", "redirected", "ignored")
ACTORS = ("agent", "person")
# The gate (docs/gate.md): the branch that decided, and the urgency levels, in the reference order.
GATE_BRANCHES = ("floor", "preference", "duplicate", "alarm", "hold", "attention", "digest", "note")
URGENCIES = ("info", "attention", "alarm")

# field -> (type, required); "machine" and "name" are checked beyond their type.
_FIELDS: dict[str, dict[str, tuple[str, bool]]] = {
    "team": {"name": ("str", True), "founder": ("machine", True)},
    "member": {
        "machine": ("machine", True),
        "person": ("name", True),
        "name": ("name", True),
        "role": ("role", True),
        "active": ("bool", True),
        "emails": ("list", True),
        "ts": ("int", True),
        "admission": ("dict", False),
    },
    "invite": {
        "id": ("hex", True),
        "key": ("machine", True),
        "reusable": ("bool", True),
        "expires": ("int", True),
        "person": ("name", False),
        "note": ("str", False),
        "role": ("role", False),  # "anchor": admits only an anchor machine (gitive invite --anchor)
    },
    # Lessons (header; the body lives in the author's body store under body_hash).
    "lesson": {
        "id": ("hex", True),
        "kind": ("lesson-kind", True),
        "evidence": ("list", True),
        "tags": ("list", True),
        "body_hash": ("hex", True),
        "hearsay": ("bool", True),
        "supersedes": ("hex", False),
        "session": ("str", False),
    },
    "review": {
        "about": ("hex", True),
        "approver": ("name", True),
        "approved": ("bool", True),
        "note": ("str", True),
        "asker": ("str", False),
        "question": ("str", False),
        "scope": ("dict", False),
        "edits": ("hex", False),  # body hash of the reviewer's replacement text, in the reviewer's body store
        "diff_hash": ("str", False),
        "base": ("str", False),
    },
    "tombstone": {"lesson": ("hex", True), "reason": ("str", True), "bodies": ("list", True)},
    # An agent used a lesson in a session; written once the outcome is known (a day after the session ended).
    "citation": {
        "lesson": ("hex", True),
        "session": ("str", True),
        "success": ("bool", True),
        "tests_passed": ("bool", True),
        "reverted": ("bool", True),
    },
    # Mail between sessions (DESIGN §4): in the sender's `mail` log; acks in the recipient's.
    "message": {
        "id": ("ulid", True),
        "from": ("str", True),  # address: person/session, or person/terminal when a person typed it
        "to": ("str", True),  # the address as the sender wrote it
        "recipients": ("list", True),  # [{machine, session}] as the sender's directory resolved it
        "body": ("str", True),
        "from_person": ("bool", True),
        "reply_to": ("ulid", False),
        "repo": ("str", False),
    },
    "ack": {"message": ("ulid", True), "state": ("ack-state", True), "session": ("str", True)},
    "project-member": {
        "project": ("hex", True),
        "person": ("name", True),
        "role": ("project-role", True),
        "confirmed": ("bool", True),
    },
    # Obligations (DESIGN §8, docs/obligations.md): a promise with a CEL condition over the event vocabulary.
    "obligation": {
        "id": ("hex", True),  # blake3 of [author, the record without id]
        "owner": ("name", True),
        "condition": ("str", True),
        "action": ("str", True),
        "expires": ("int", True),
        "created": ("int", True),
        "source": ("dict", True),  # {kind: owe|cli|review|message|promise, ref?}
        "vocabulary": ("int", True),  # the events.json version the condition was checked against
        "actor": ("actor", True),
        "to": ("str", False),
        "deadline": ("int", False),
        "files": ("list", False),
        "project": ("hex", False),
        "gesture": ("dict", False),
    },
    "obligation-state": {
        "obligation": ("hex", True),
        "state": ("obligation-state", True),
        "actor": ("actor", True),
        "expires": ("int", False),  # renewed: the new expiry
        "note": ("str", False),
        "gesture": ("dict", False),
    },
    # The anchor's record that an obligation fired: checked before firing again, so a crash never fires twice.
    "firing": {
        "obligation": ("hex", True),
        "reason": ("firing-reason", True),
        "item": ("hex", True),
        "due": ("int", True),  # when it became due: the event's time, the deadline, or the lapse warning time
        "late": ("bool", True),
        "event": ("dict", False),  # {id, action, source, ts}: metadata of the event that satisfied it
    },
    # The anchor's evaluation verdict when it is not a firing (written when it changes).
    "verdict": {
        "obligation": ("hex", True),
        "value": ("verdict", True),
        "reason": ("str", True),
    },
    # A who_knows answer that led to a message (docs/obligations.md, "Routing").
    "routing": {
        "id": ("hex", True),
        "session": ("str", True),
        "context": ("dict", True),
        "candidates": ("list", True),
        "choice": ("str", True),
        "message": ("ulid", True),
    },
    "routing-outcome": {"routing": ("hex", True), "outcome": ("routing-outcome", True)},
    # A candidate item for a person's attention (docs/gate.md): proposed by a session (its machine's team log,
    # MCP propose_item) or made by the anchor (its ledger log) from an obligation, a watcher or dangling work.
    "item": {
        "id": ("hex", True),  # stable: the same item from two anchors has the same id
        "fingerprint": ("hex", True),  # source kind, subject and owner, never the wording: the duplicate check
        "source": ("dict", True),  # {kind: obligation|watcher|dangling|prepared|session|screening|digest, ref}
        "kind": ("str", True),  # e.g. obligation.fired, watch.ci.failed, dangling.branch, proposed, digest
        "subject": ("str", True),  # what it is about: an obligation id, a branch, a session address
        "owner": ("name", True),  # whose attention it is for, from the graph
        "title": ("str", True),  # at most 140 characters
        "about": ("list", True),  # the records it is about: [{kind, id}]
        "created": ("int", True),
        "files": ("list", False),
        "counts": ("dict", False),  # a digest: what the anchor checked since the last one (integers)
    },
    # The gate's decision about one item for one person: metadata only (the team store is readable by all).
    "ledger": {
        "item": ("hex", True),
        "person": ("name", True),
        "branch": ("gate-branch", True),
        "rule": ("str", True),  # the rule that decided, in words, naming no item text
        "fingerprint": ("hex", True),
        "source": ("str", True),  # the source whose budget share it counts against
        "shadow": ("bool", True),  # the person's gate was in shadow: only a floor was sent
        "urgency": ("urgency", False),
        "because": ("list", False),  # [{rule, kind, id}]: the checkable records the urgency came from
        "until": ("int", False),  # hold: when it re-enters; attention: the latest it is shown (bounded deferral)
        "prior": ("hex", False),  # duplicate: the item it repeats
        "channel": ("list", False),  # session / desktop / inbox
        "budget": ("dict", False),  # attention: {used, of, source_used, source_of} after this one
    },
    # A person's gate preferences: their own signed record, set at a terminal (gitive prefs).
    "prefs": {
        "person": ("name", True),
        "ts": ("int", True),
        "budget": ("int", True),  # attention-level items a day
        "alarms": ("bool", True),
        "channel": ("list", True),
        "alarm_channel": ("list", True),
        "muted_sources": ("list", True),
        "muted_kinds": ("list", True),
        "tz": ("str", True),
        "digest_at": ("str", True),  # HH:MM in tz
        "share": ("int", True),  # per-mille of the budget one source may take
        "actor": ("actor", True),
        "quiet": ("dict", False),  # {start: HH:MM, end: HH:MM}
        "gesture": ("dict", False),
    },
    # A person's gate goes live (real delivery) or back to shadow.
    "gate-live": {"person": ("name", True), "live": ("bool", True), "ts": ("int", True), "actor": ("actor", True),
                  "gesture": ("dict", False)},
}

KINDS = tuple(_FIELDS)


def _type_ok(kind: str, value: Any) -> bool:
    match kind:
        case "str":
            return isinstance(value, str)
        case "int":
            return isinstance(value, int) and not isinstance(value, bool)
        case "bool":
            return isinstance(value, bool)
        case "list":
            return isinstance(value, list)
        case "dict":
            return isinstance(value, dict)
        case "machine":
            return is_machine_id(value)
        case "name":
            return is_name(value)
        case "role":
            return value in ROLES
        case "lesson-kind":
            return value in LESSON_KINDS
        case "project-role":
            return value in PROJECT_ROLES
        case "ulid":
            return isinstance(value, str) and bool(_ULID.fullmatch(value))
        case "ack-state":
            return value in ("delivered", "read")
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
        case "hex":
            return is_hex64(value)
        case "any":
            return True
    raise AssertionError(f"unknown field type {kind}")


def check_record(record: Any) -> str:
    """Validate a record; return its kind.

    Raises:
        InvalidRecord: unknown kind, a missing or mistyped field, or an unknown field.
    """
    if not isinstance(record, dict) or not isinstance(record.get("type"), str):
        raise InvalidRecord("a record must be an object with a string `type`")
    kind = record["type"]
    fields = _FIELDS.get(kind)
    if fields is None:
        raise InvalidRecord(f"unknown record kind {kind!r}; known kinds: {', '.join(sorted(_FIELDS))}")
    for name, (ftype, required) in fields.items():
        if name not in record:
            if required:
                raise InvalidRecord(f"{kind} record is missing `{name}`")
            continue
        if not _type_ok(ftype, record[name]):
            raise InvalidRecord(f"{kind} record has a bad `{name}` (expected {ftype}): {record[name]!r:.80}")
    extra = set(record) - set(fields) - {"type"}
    if extra:
        raise InvalidRecord(f"{kind} record has unknown fields: {', '.join(sorted(extra))}")
    return kind


def check_scope(scope: Any) -> None:
    ok = isinstance(scope, dict) and len(scope) == 1 and (
        scope.get("team") is True
        or is_hex64(scope.get("project"))
        or is_name(scope.get("personal"))
    )
    if not ok:
        raise InvalidRecord(f"bad scope {scope!r}: use {{team: true}}, {{project: id}} or {{personal: person}}")


def check_log_name(log: Any) -> None:
    if log not in LOG_NAMES:
        raise InvalidRecord(f"unknown log {log!r}; logs are {', '.join(LOG_NAMES)}")


def check_entry(entry: Any, now: int | None = None) -> str:
    """Validate a ``LogEntry`` body; return its record kind.

    Raises:
        InvalidRecord: any field is missing or malformed, or the entry is stamped over a day ahead.
    """
    if not isinstance(entry, dict):
        raise InvalidRecord("a log entry must be an object")
    expected = {"author", "log", "scope", "seq", "at", "record"}
    if set(entry) != expected:
        raise InvalidRecord(f"a log entry has exactly the fields {', '.join(sorted(expected))}")
    if not is_machine_id(entry["author"]):
        raise InvalidRecord("entry author is not a machine id")
    check_log_name(entry["log"])
    check_scope(entry["scope"])
    for name in ("seq", "at"):
        if not isinstance(entry[name], int) or isinstance(entry[name], bool) or entry[name] < 1:
            raise InvalidRecord(f"entry `{name}` must be a positive integer")
    if now is not None and entry["at"] > now + MAX_SKEW_MS:
        raise InvalidRecord("entry is stamped more than a day in the future")
    return check_record(entry["record"])
