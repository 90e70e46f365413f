"""Overlap notices: two live sessions modifying the same file of the same repository within 30 minutes.

Each daemon tells its own sessions (the other machine's daemon tells its own), once per pair and file per
window, as a turn-tier notice delivered at the session's next hook call.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from gitive.capture import framing
from gitive.core.clock import now_ms

WINDOW_MS = 30 * 60_000


def notices(db: sqlite3.Connection, mine: list[dict[str, Any]], directory: list[dict[str, Any]],
            my_person: str, now: int | None = None) -> int:
    """Queue a notice for each of this machine's sessions that shares a modified file with another session."""
    now = now if now is not None else now_ms()
    window = now // WINDOW_MS
    added = 0
    for session in mine:
        address = f"{my_person}/{session['name']}"
        modified = set(session.get("modified") or [])
        if not modified or not session.get("project"):
            continue
        for other in directory:
            if other.get("address") == address or not other.get("live"):
                continue
            if other.get("project") != session["project"]:
                continue
            shared = sorted(modified & set(other.get("modified") or []))
            for path in shared:
                pair = "|".join(sorted([address, str(other["address"])]))
                key = f"overlap:{pair}:{path}:{window}:{session['name']}"
                who, file = framing.defang(str(other["address"])), framing.defang(path)
                text = (f"<team-notice kind=\"overlap\" with=\"{framing.escape_attr(str(other['address']))}\">\n"
                        f"{who} ({framing.defang(str(other.get('harness')))}) is also changing {file} in this "
                        f"repository right now. Coordinate before you both edit it: send_message to \"{who}\".\n"
                        "</team-notice>")
                cur = db.execute("INSERT OR IGNORE INTO notices VALUES (?,?,?,?, 'queued', NULL)",
                                 (key, session["name"], text, now))
                added += cur.rowcount
    return added
