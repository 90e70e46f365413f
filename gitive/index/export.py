"""Verified records as JSON Lines, for ``jq`` and other tools (``gitive export``).

Only what this machine's index holds as verified counts: entries the roster admits at their position, outside
any quarantine (the ``admitted_entries`` view). A sealed entry is exported as the record it opened to, only when
this machine holds its key; one it cannot open is left out. A lesson line also carries its state and the text a
reader is shown (none once retracted), since the text lives in the body store, not in the record.

Each line is one JSON object, format ``v: 1``::

    {"v": 1, "kind": "lesson", "author": "<machine>", "person": "alice", "machine_name": "laptop",
     "log": "team", "seq": 4, "at": 1764612345678, "commit": "<entry commit>", "scope": {"team": true},
     "sealed": false, "record": {...}, "lesson": {"state": "verified", "text": "...", ...}}
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from gitive.errors import GitiveError
from gitive.index import lesson_text

FORMAT = 1
DEFAULT_KINDS = ("lesson", "review", "tombstone", "obligation", "obligation-state", "firing", "verdict", "item")
_DAY_MS = 86_400_000
_UNITS = {"m": 60_000, "h": 3_600_000, "d": _DAY_MS, "w": 7 * _DAY_MS}

_ROWS = """
    SELECT e.author, e.log, e.seq, e.commit_id, e.kind, e.at, e.scope, e.envelope, m.person, m.name, s.inner
    FROM admitted_entries e JOIN members m ON m.machine = e.author
    LEFT JOIN sealed_entries s ON s.author = e.author AND s.log = e.log AND s.seq = e.seq AND s.state = 1
    WHERE e.at >= ? AND (e.kind IN (SELECT value FROM json_each(?))
                         OR (e.kind = 'sealed' AND s.kind IN (SELECT value FROM json_each(?))))
    ORDER BY e.at, e.author, e.log, e.seq
"""


def parse_since(text: str, now: int) -> int:
    """``7d``, ``36h``, ``2w`` ago; a day ``2026-11-01`` (its start, UTC); or an ISO time; in ms.

    Raises:
        GitiveError: none of those.
    """
    value = text.strip().lower()
    found = re.fullmatch(r"(\d{1,6})([mhdw])", value)
    if found:
        return now - int(found.group(1)) * _UNITS[found.group(2)]
    try:
        when = datetime.fromisoformat(value.upper().replace("Z", "+00:00") if "t" in value else value)
    except ValueError:
        raise GitiveError(f"--since {text[:80]!r} is not a time: use 7d, 36h, 2w, 2026-11-01 or "
                          "2026-11-01T09:00Z") from None
    return int((when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp() * 1000)


def records(conn: sqlite3.Connection, kinds: tuple[str, ...] = DEFAULT_KINDS, since: int = 0
            ) -> Iterator[dict[str, Any]]:
    """Every verified record of ``kinds`` at or after ``since``, oldest first, one dict per line to write."""
    wanted = json.dumps(sorted(set(kinds)))
    for author, log, seq, commit, kind, at, scope, envelope, person, name, inner in conn.execute(
            _ROWS, (since, wanted, wanted)):
        record = json.loads(inner) if kind == "sealed" else json.loads(envelope)["body"]["record"]
        line: dict[str, Any] = {"v": FORMAT, "kind": record["type"], "author": author, "person": person,
                                "machine_name": name, "log": log, "seq": seq, "at": at, "commit": commit,
                                "scope": json.loads(scope), "sealed": kind == "sealed", "record": record}
        if record["type"] == "lesson":
            line["lesson"] = _shown(conn, record)
        yield line


def _shown(conn: sqlite3.Connection, record: dict[str, Any]) -> dict[str, Any]:
    """A lesson as readers see it now: its state and shown text (nothing of the text once retracted)."""
    row = conn.execute("SELECT state, approver FROM lesson_status WHERE lesson = ?", (record.get("id"),)).fetchone()
    state = row[0] if row else "proposed"
    out: dict[str, Any] = {"state": state, "reviewer": row[1] if row else None}
    body = lesson_text.effective_body(conn, record["id"]) if state != "retracted" else None
    if body is not None:
        text, applicability, quote, shown_hash = body
        out.update(text=text, applicability=applicability, quote=json.loads(quote) if quote else None,
                   symptoms=lesson_text.symptoms(conn, record["id"], shown_hash))
    return out
