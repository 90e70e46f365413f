"""Obligation records: promises with a CEL condition, their states, the anchor's firings and verdicts, and the
who_knows routing that led to a message (DESIGN §8, docs/obligations.md). Each kind's fields, and their caps."""

from __future__ import annotations

OBLIGATION_STATES = ("done", "cancelled", "renewed")
FIRING_REASONS = ("condition", "deadline", "lapsing")
VERDICTS = ("unsatisfied", "unverifiable")
ROUTING_OUTCOMES = ("answered", "helpful", "redirected", "ignored")

FIELDS: dict[str, dict[str, tuple[str, bool]]] = {
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
}

CAPS: dict[tuple[str, str], int] = {
    ("obligation", "condition"): 8 * 1024,  # 2,000 characters (anchor.conditions.MAX_CONDITION) of any UTF-8
    ("obligation", "action"): 2 * 1024,  # 500 characters
}
