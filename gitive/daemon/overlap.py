"""Overlap notices: two live sessions modifying the same file of the same repository within 30 minutes, or
one modifying a file another has claimed (``claim_files``).

Each daemon tells its own sessions (the other machine's daemon tells its own), once per pair and file per
window, as a turn-tier notice delivered at the session's next hook call. A claim makes the notice come at the
first edit of the claimed file (the claimant need not have changed it yet) and says until when it holds.
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any

from gitive.capture import framing
from gitive.core.clock import now_ms
from gitive.daemon import claims

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
            held = {c["path"]: c for c in claims.active(other, now)}
            shared = sorted(modified & (set(other.get("modified") or []) | set(held)))
            for path in shared:
                pair = "|".join(sorted([address, str(other["address"])]))
                key = f"overlap:{pair}:{path}:{window}:{session['name']}"
                who, file = framing.defang(str(other["address"])), framing.defang(path)
                if path in held:
                    note = f" (\"{framing.defang(str(held[path]['note']))}\")" if held[path].get("note") else ""
                    until = time.strftime("%H:%M", time.localtime(held[path]["until"] / 1000))
                    doing = f"has claimed {file} until {until}{note}"
                else:
                    doing = f"is also changing {file} in this repository right now"
                text = (f"<team-notice kind=\"overlap\" with=\"{framing.escape_attr(str(other['address']))}\">\n"
                        f"{who} ({framing.defang(str(other.get('harness')))}) {doing}. Coordinate before you "
                        f"both edit it: send_message to \"{who}\".\n"
                        "</team-notice>")
                cur = db.execute("INSERT OR IGNORE INTO notices VALUES (?,?,?,?, 'queued', NULL)",
                                 (key, session["name"], text, now))
                added += cur.rowcount
    return added
