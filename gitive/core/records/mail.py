"""Mail records: messages between sessions, in the sender's ``mail`` log, and their acknowledgements, in the
recipient's (DESIGN §4). Each kind's fields, and their size caps."""

from __future__ import annotations

MAX_MESSAGE_BODY = 64 * 1024
ACK_STATES = ("delivered", "read")

FIELDS: dict[str, dict[str, tuple[str, bool]]] = {
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
}

CAPS: dict[tuple[str, str], int] = {
    ("message", "body"): MAX_MESSAGE_BODY,
}
