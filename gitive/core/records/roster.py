"""Roster and membership records: the team's founding, members, invites, person keys and the migration to
required gestures (docs/people.md, docs/verification.md §3). Each kind's fields, and their size caps."""

from __future__ import annotations

ROLES = ("admin", "member", "anchor")

# field -> (type, required); the types are checked in records.fields.
FIELDS: dict[str, dict[str, tuple[str, bool]]] = {
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
}

# (kind, field) -> cap in bytes, where the field's type cap does not fit (records.kinds.field_cap).
CAPS: dict[tuple[str, str], int] = {
    ("member", "emails"): 4 * 1024,
}
