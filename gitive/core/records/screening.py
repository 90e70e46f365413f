"""Screening records: outbound screening's findings after the fact (docs/screening.md). Its fields."""

from __future__ import annotations

FIELDS: dict[str, dict[str, tuple[str, bool]]] = {
    # A session's egress (a message, curl, wget, nc) and a credential-file read within 120 s. In the finding
    # machine's team log; metadata only (no path, no text).
    "finding": {
        "id": ("hex", True),
        "rule": ("str", True),  # secret-read-then-egress
        "session": ("str", True),  # the session's name on that machine
        "egress": ("str", True),  # message | lesson | curl | wget | nc
        "read_at": ("int", True),
        "egress_at": ("int", True),
        "message": ("str", False),  # the message id, for a message
    },
}

CAPS: dict[tuple[str, str], int] = {}
