"""Record kinds and their shapes: the write-time checks every entry passes before it is signed.

The JSON Schemas in ``refs_schema/`` say the same in a machine-readable form; tests hold the two together.
"""

from __future__ import annotations

import re
from typing import Any

from gitive.constants import LOG_NAMES, MAX_SKEW_MS, PROJECT_LOG_PREFIX
from gitive.core import decisions
from gitive.core.ids import is_hex64, is_machine_id, is_name
from gitive.errors import InvalidRecord

ROLES = ("admin", "member", "anchor")
_SIG = re.compile(r"[0-9a-f]{128}")
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
PREPARED_STATES = ("running", "drafted", "failed", "over-budget", "question", "stale", "landed", "proposed",
                   "refused")
STANDING_STATES = ("suspended", "revoked")

# field -> (type, required); "machine" and "name" are checked beyond their type.
_FIELDS: dict[str, dict[str, tuple[str, bool]]] = {
    # version 2: founded with roles and person keys; gestures are required from the start (no field: v1).
    "team": {"name": ("str", True), "founder": ("machine", True), "version": ("int", False)},
    "member": {
        "machine": ("machine", True),
        "person": ("name", True),
        "name": ("name", True),
        "role": ("role", True),
        "active": ("bool", True),
        "emails": ("list", True),
        "ts": ("int", True),
        "admission": ("dict", False),
        "heads": ("heads", False),  # on a deactivation or re-activation: the machine's log heads as seen
        "gesture": ("gesture", False),
    },
    "invite": {
        "id": ("hex", True),
        "key": ("machine", True),
        "reusable": ("bool", True),
        "expires": ("int", True),
        "person": ("name", False),
        "note": ("str", False),
        "role": ("role", False),  # "anchor": admits only an anchor machine (gitive invite --anchor)
        "gesture": ("gesture", False),
    },
    # A person's key for their decisions (docs/verification.md §3); `endorse` when it adds to a registered key.
    "person-key": {
        "person": ("name", True),
        "key": ("hex", True),
        "ts": ("int", True),
        "gesture": ("gesture", True),
        "endorse": ("gesture", False),
    },
    # An admin's switch of a v1 team to required gestures: decisions at or below `heads` stay valid without.
    "migration": {
        "version": ("int", True),
        "heads": ("machine-heads", True),
        "gesture": ("gesture", True),
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
        "gesture": ("gesture", False),
    },
    "tombstone": {"lesson": ("hex", True), "reason": ("str", True), "bodies": ("list", True),
                  "gesture": ("gesture", False)},
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
        "gesture": ("gesture", False),
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
        "title": ("str", False),  # v1 (and a session's proposal): at most 140 characters, in the clear
        "v": ("format-version", False),  # 2: an anchor's item whose title is sealed to its audience
        "sealed": ("dict", False),  # v2: {to: {machine: box of the key}, box: the title under that key}
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
    # Ledger format 2 (docs/gate.md): one entry per tick holding that tick's decisions (another past 64 KiB), each
    # a ledger record without `type`; one signature for many decisions, each still found by its item.
    "ledger-batch": {
        "v": ("format-version", True),
        "decisions": ("list", True),
    },
    # Outbound screening after the fact (docs/screening.md): a session's egress (a message, curl, wget, nc) and a
    # credential-file read within 120 s. In the finding machine's team log; metadata only (no path, no text).
    "finding": {
        "id": ("hex", True),
        "rule": ("str", True),  # secret-read-then-egress
        "session": ("str", True),  # the session's name on that machine
        "egress": ("str", True),  # message | lesson | curl | wget | nc
        "read_at": ("int", True),
        "egress_at": ("int", True),
        "message": ("str", False),  # the message id, for a message
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
    # Prepared work (docs/prepared.md). A task handed to the anchor: by a person (`gitive hand`), a handoff, an
    # obligation or a watcher; in the hander's team log. The anchor's work on it is `prepared` records.
    "task": {
        "id": ("hex", True),  # blake3 of [author, the record without id]
        "repo": ("hex", True),  # project id
        "base": ("dict", True),  # {branch, commit}: what the worker starts from
        "brief": ("str", True),  # the handoff brief, or what to fix (at most 48 KiB)
        "test": ("str", True),  # the test command ("" when there is none)
        "worker": ("name", True),  # a worker named in the anchor's config
        "kind": ("name", True),  # the class of change (standing approvals cover a kind)
        "budget": ("dict", True),  # {wall: seconds, spend?: units}
        "owner": ("name", True),  # who the prepared item goes to
        "created": ("int", True),
        "actor": ("actor", True),
        "source": ("dict", True),  # {kind: hand|handoff|obligation|watcher, ref?}
        "target": ("str", False),  # the branch an approved change lands on (default: the base branch)
        "marker": ("dict", False),  # the handoff marker the sending machine signed
    },
    # The anchor's record of one step of a task (its ledger log): drafted, failed, landed, ...
    "prepared": {
        "task": ("hex", True),
        "state": ("prepared-state", True),
        "attempt": ("int", True),  # 1, then one more per rebase onto a moved base
        "branch": ("str", False),  # refs/heads/hive/<name>
        "head": ("str", False),  # the draft's commit
        "base": ("dict", False),  # {branch, commit} its tests ran on
        "diff_hash": ("str", False),  # blake3 of the exact diff base..head
        "stat": ("dict", False),  # {files, insertions, deletions, paths}
        "tests": ("dict", False),  # {command, before, after}: exit codes
        "fixes": ("list", False),  # failing tests the draft fixes
        "question": ("str", False),  # the worker needs a person's decision
        "reason": ("str", False),
        "review": ("dict", False),  # {author, log, seq}: the review that authorized a landing or proposal
        "standing": ("hex", False),  # or the standing approval that covered it
        "commit": ("str", False),  # what was landed or proposed
    },
    # A standing approval (a person's decision, with a gesture): covered uses need no per-change review.
    "standing-approval": {
        "id": ("hex", True),
        "kind": ("name", True),
        "repo": ("hex", True),
        "perimeter": ("dict", True),  # {paths: [globs], changes: [types], max_lines, checks: [commands]}
        "earned_from": ("list", True),  # [{author, log, seq}] of the reviews that earned it
        "sponsor": ("name", True),
        "expires": ("int", True),
        "created": ("int", True),
        "gesture": ("gesture", False),
    },
    # Suspended (by the anchor, by itself) or revoked (by a person, with a gesture).
    "standing-state": {
        "standing": ("hex", True),
        "state": ("standing-state", True),
        "reason": ("str", True),
        "ref": ("str", False),  # what caused it: a commit, a task
        "gesture": ("gesture", False),
    },
    # More Outside paths for one project (docs/prepared.md): an admin's decision, with a gesture. Paths only grow:
    # every valid record adds its globs, so an old one replayed takes nothing away.
    "outside-paths": {"v": ("format-version", True), "repo": ("hex", True), "paths": ("list", True),
                      "created": ("int", True), "gesture": ("gesture", False)},
    # A project's new id is also its old one (docs/people.md, Projects that move): an admin's decision, with a
    # gesture. Readers count v1 only; a repository whose remote id is `to` then reads as project `from`.
    "project-link": {"v": ("format-version", True), "from": ("hex", True), "to": ("hex", True),
                     "label": ("str", False), "was": ("str", False), "created": ("int", True),
                     "gesture": ("gesture", False)},
    # Sealed scopes (docs/scopes.md): one epoch of a scope's key, sealed to each recipient machine (X25519 from
    # its machine key), with the keys of earlier epochs wrapped under it. `epoch` names the key, never shows it.
    "scope-key": {"v": ("format-version", True), "epoch": ("hex", True), "recipients": ("sealed-boxes", True),
                  "wraps": ("sealed-boxes", True)},
    # A record of a sealed scope (a lesson, review, tombstone or citation), encrypted under an epoch's key.
    "sealed": {"v": ("format-version", True), "epoch": ("hex", True), "box": ("str", True)},
}

# Every decision kind carries its own signed time and place (gitive/core/decisions.py), optional so that
# records of decision format v1 still read.
for _kind in decisions.KINDS:
    _FIELDS[_kind][decisions.FIELD] = ("decided", False)

KINDS = tuple(_FIELDS)

# Size caps (v2 entries, and every record at write time): each field is capped by its type, in UTF-8 bytes for
# strings and canonical JSON bytes for lists and objects, unless an override names the field. Types not listed
# here (ids, names, enums, booleans) are bounded by their own check; integers by MAX_INT. A new field gets its
# type's cap without a line here; give it an override only when its type's cap does not fit.
TYPE_CAPS: dict[str, int] = {"str": 1024, "list": 16 * 1024, "dict": 4 * 1024}
FIELD_CAPS: dict[tuple[str, str], int] = {
    ("message", "body"): MAX_MESSAGE_BODY,
    ("review", "note"): 8 * 1024,
    ("review", "question"): 8 * 1024,
    ("tombstone", "reason"): 4 * 1024,
    ("lesson", "evidence"): 32 * 1024,
    ("lesson", "tags"): 4 * 1024,
    ("member", "emails"): 4 * 1024,
    ("obligation", "condition"): 8 * 1024,  # 2,000 characters (anchor.conditions.MAX_CONDITION) of any UTF-8
    ("obligation", "action"): 2 * 1024,  # 500 characters
    ("task", "brief"): 48 * 1024,  # a handoff brief is at most 48 KiB
    ("task", "test"): 2 * 1024,
    ("prepared", "question"): 4 * 1024,
    ("scope-key", "recipients"): 64 * 1024,  # about 360 recipient machines
    ("scope-key", "wraps"): 16 * 1024,  # about 90 earlier epochs
    ("sealed", "box"): 80 * 1024,
    ("ledger-batch", "decisions"): 88 * 1024,  # what fits an entry; the gate starts another entry at 64 KiB
    ("item", "sealed"): 24 * 1024,  # a title's box and its key for each of the person's machines and the anchors  # the largest sealable record (a lesson with 32 KiB of evidence), in base64
}
MAX_INT = 2**63 - 1  # what SQLite and every JSON reader hold exactly

ENTRY_VERSION = 2  # LogEntry format written now; v1 entries (no `v`) are still read
_V1_FIELDS = frozenset({"author", "log", "scope", "seq", "at", "record"})
_V2_FIELDS = _V1_FIELDS | {"v"}
_V2_LINKED = _V2_FIELDS | {"prev"}


def field_cap(kind: str, name: str, ftype: str) -> int | None:
    """The size cap of ``kind``'s field ``name`` of type ``ftype`` (None: bounded by its type check)."""
    return FIELD_CAPS.get((kind, name), TYPE_CAPS.get(ftype))


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


# The common field types checked without the dispatch below (the hot read path checks every entry); a type
# not listed here is checked by _type_ok.
_FAST: dict[str, Any] = {
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


def _type_ok(kind: str, value: Any) -> bool:
    match kind:
        case "str":
            return isinstance(value, str)
        case "int":
            return isinstance(value, int) and not isinstance(value, bool) and -MAX_INT <= value <= MAX_INT
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
        case "prepared-state":
            return value in PREPARED_STATES
        case "standing-state":
            return value in STANDING_STATES
        case "hex":
            return is_hex64(value)
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
        case "any":
            return True
    raise AssertionError(f"unknown field type {kind}")


_Plan = list[tuple[str, str, Any, bool, "int | None"]]
_PLANS: dict[str, _Plan] = {}


def _plan(kind: str, fields: dict[str, tuple[str, bool]]) -> _Plan:
    """Per field of ``kind``: (name, type, checker or None for _type_ok, required, cap), built once a kind."""
    plan = _PLANS.get(kind)
    if plan is None:
        plan = _PLANS[kind] = [(name, ftype, _FAST.get(ftype), required, field_cap(kind, name, ftype))
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
    fields = _FIELDS.get(kind)
    if fields is None:
        raise InvalidRecord(f"unknown record kind {kind!r}; known kinds: {', '.join(sorted(_FIELDS))}")
    present = 1
    for name, ftype, fast, required, cap in _plan(kind, fields):
        if name not in record:
            if required:
                raise InvalidRecord(f"{kind} record is missing `{name}`")
            continue
        present += 1
        value = record[name]
        if not (fast(value) if fast is not None else _type_ok(ftype, value)):
            raise InvalidRecord(f"{kind} record has a bad `{name}` (expected {ftype}): {value!r:.80}")
        if caps and cap is not None and (within is None or cap < within) and (size := _size(value, cap)) > cap:
            raise InvalidRecord(f"{kind} record `{name}` is {size:,} bytes, over its cap of {cap:,}: shorten it")
    if present != len(record):
        extra = set(record) - set(fields) - {"type"}
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


def project_log(project_id: str) -> str:
    """The log a machine writes project-scope entries of ``project_id`` to."""
    return PROJECT_LOG_PREFIX + project_id[:16]


def is_log_name(log: Any) -> bool:
    """A known log, or a project log ``project-<16 hex>`` (one per author and project)."""
    if log in LOG_NAMES:
        return True
    suffix = log[len(PROJECT_LOG_PREFIX):] if isinstance(log, str) and log.startswith(PROJECT_LOG_PREFIX) else ""
    return len(suffix) == 16 and all(c in "0123456789abcdef" for c in suffix)


def check_log_name(log: Any) -> None:
    if not is_log_name(log):
        raise InvalidRecord(f"unknown log {log!r}; logs are {', '.join(LOG_NAMES)} and project-<16 hex>")


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
