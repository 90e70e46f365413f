"""Gate records: items for a person's attention, the gate's ledger of what it decided about them, and each
person's gate preferences and live switch (docs/gate.md). Each kind's fields, and their size caps."""

from __future__ import annotations

# The branch that decided, and the urgency levels, in the reference order.
GATE_BRANCHES = ("floor", "preference", "duplicate", "alarm", "hold", "attention", "digest", "note")
URGENCIES = ("info", "attention", "alarm")

FIELDS: dict[str, dict[str, tuple[str, bool]]] = {
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

CAPS: dict[tuple[str, str], int] = {
    ("ledger-batch", "decisions"): 88 * 1024,  # what fits an entry; the gate starts another entry at 64 KiB
    ("item", "sealed"): 24 * 1024,  # a title's box and its key for each of the person's machines and the anchors
}
