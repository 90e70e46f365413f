"""Outbound screening after the fact: an egress, then a credential-file read (or a ``curl`` after one).

When a session's message (or a ``curl``, ``wget`` or ``nc`` command) went out before the credential read that
makes it suspect, nothing can be held any more (:mod:`gitive.daemon.outbound` holds the other order). The
match becomes a ``finding`` record in this machine's team log, metadata only (the rule, the session's name,
the kind of egress, a message id, two times; never the file's path or any text), and the anchor puts it
through its gate as a floor: a security finding reaches this machine's person whatever their preferences
(:mod:`gitive.anchor.gate.floors`). A machine can raise a finding only to its own person, so a forged one
interrupts nobody else.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any, NamedTuple

from gitive.capture import events
from gitive.core.clock import now_ms
from gitive.core.ids import record_id
from gitive.core.records import TEAM_SCOPE
from gitive.daemon import db as daemon_db
from gitive.daemon import outbound
from gitive.errors import GitiveError
from gitive.store import logs
from gitive.team.hive import Hive

CURSOR = "findings_scanned_ms"
FIRST_LOOK_MS = 600_000
SCHEMA = """
CREATE TABLE IF NOT EXISTS findings(id TEXT PRIMARY KEY, session_key TEXT NOT NULL, record TEXT NOT NULL,
    found_at INTEGER NOT NULL, written INTEGER NOT NULL DEFAULT 0);
"""


class Egress(NamedTuple):
    at: int
    kind: str  # message | curl | wget | nc
    event: str
    message: str | None


def _egress(event: dict[str, Any]) -> Egress | None:
    action = event["event"].get("action")
    ident = str(event["event"].get("id", ""))
    if action == outbound.SENT:
        message = event.get("message") or {}
        if message.get("released"):  # its person read it before it left: not the session's doing
            return None
        return Egress(event["ts"], str(message.get("kind") or "message"), ident, str(message.get("id") or ""))
    command = outbound.egress_command(event)
    return Egress(event["ts"], command, ident, None) if command else None


def matches(stream: list[dict[str, Any]]) -> list[tuple[str, outbound.Read, Egress]]:
    """``(session key, read, egress)`` for every after-the-fact match in ``stream`` (events in file order):
    an egress then a credential read within 120 s, or a read then a ``curl``/``wget``/``nc`` (a gitive send
    after a read was held before it left, so it is no finding)."""
    reads: dict[str, list[outbound.Read]] = {}
    egresses: dict[str, list[Egress]] = {}
    for event in stream:
        harness, session = (event.get("harness") or {}).get("name"), (event.get("session") or {}).get("id")
        if not harness or not session:
            continue
        key = f"{harness}:{session}"
        path = outbound.credential_read(event)
        if path is not None:
            reads.setdefault(key, []).append(outbound.Read(event["ts"], path, str(event["event"].get("id", ""))))
        out = _egress(event)
        if out is not None:
            egresses.setdefault(key, []).append(out)
    found = []
    for key, outs in egresses.items():
        for out in outs:
            for read in reads.get(key, []):
                after = 0 <= read.at - out.at <= outbound.WINDOW_MS
                before = 0 <= out.at - read.at <= outbound.WINDOW_MS and out.kind not in ("message", "lesson")
                if after or before:
                    found.append((key, read, out))
    return found


def scan(db: sqlite3.Connection, now: int | None = None) -> int:
    """Look for new matches since the last scan and keep each once (``findings``); return how many are new."""
    now = now if now is not None else now_ms()
    db.executescript(SCHEMA)
    # A first scan looks back ten minutes, not through the whole log: history from before screening is no finding.
    since = int(daemon_db.meta_get(db, CURSOR, "0") or 0) or now - FIRST_LOOK_MS
    stream = list(events.read(since_ms=max(0, since - 2 * outbound.WINDOW_MS)))
    added = 0
    for key, read, out in matches(stream):
        ident = record_id("finding", key, read.event, out.event)
        record = {"type": "finding", "id": ident, "rule": outbound.RULE, "egress": out.kind,
                  "read_at": read.at, "egress_at": out.at}
        if out.message:
            record["message"] = out.message
        added += db.execute("INSERT OR IGNORE INTO findings (id, session_key, record, found_at) VALUES (?,?,?,?)",
                            (ident, key, json.dumps(record, sort_keys=True), now)).rowcount
    daemon_db.meta_set(db, CURSOR, str(now))
    return added


def publish(hive: Hive, db: sqlite3.Connection) -> int:
    """Sign the findings not written yet whose session worked in ``hive``'s repository (or in none this
    daemon knows) into this machine's team log; return how many."""
    db.executescript(SCHEMA)
    root = _root(hive)
    written = 0
    for ident, key, text in db.execute("SELECT id, session_key, record FROM findings WHERE written = 0").fetchall():
        row = db.execute("SELECT name, repo FROM sessions WHERE key = ?", (key,)).fetchone()
        if row and row[1] and root is not None and Path(row[1]).resolve() != root:
            continue
        record = json.loads(text) | {"session": row[0] if row else key.split(":", 1)[0]}
        logs.append(hive.store, hive.key, hive.team_id, "team", TEAM_SCOPE, record)
        db.execute("UPDATE findings SET written = 1 WHERE id = ?", (ident,))
        written += 1
    return written


def _root(hive: Hive) -> Path | None:
    """The work tree of ``hive``'s project, or None for a team store without one (every finding goes there)."""
    try:
        return Path(hive.project.workdir or hive.project.path).resolve()
    except Exception:  # a bare team store has no project repository
        return None


def report(hive: Hive, db: sqlite3.Connection) -> str | None:
    """Scan, then publish to ``hive``; the one-line reason when that failed (a sync must go on without it)."""
    try:
        scan(db)
        publish(hive, db)
    except (GitiveError, OSError, sqlite3.Error, ValueError) as exc:
        return f"outbound screening could not record its findings: {type(exc).__name__}: {str(exc)[:120]}"
    return None
