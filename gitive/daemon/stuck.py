"""Stuck signatures: computed by each member's daemon from its own events; only their hashes leave the machine.

A session is stuck on a failure when the same normalized command exits with the same non-zero code three
times within 15 minutes and no file was modified in between (reference D-13). Its signature is the failure
signature the quiet pass uses (:func:`gitive.learn.pairs.signature`: the normalized command, the failing test,
the error class, hashed locally), so a verified lesson drafted from that failure carries the same hash (its tag
``signature:<hash>``). A run of turns without any file change is stuck too (signature of kind ``turns``, which
names the session only and starts with ``turns``, so the anchor can tell it apart: it points such a session at
the verified lessons about the files it keeps reading, or at someone else working on them,
gitive/anchor/prepared/rescue.py).

When the same command later passes in that session, the signature is published as *resolved* for 24 hours,
so a teammate stuck on it learns that someone got past it. Presence carries, per session, ``stuck: [hash]``
and, per machine, ``resolved: [{signature, until}]``: hashes and times, never commands or output.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable
from typing import Any

from gitive.core.clock import now_ms

REPEATS = 3
WINDOW_MS = 15 * 60_000
TURNS = 8  # turns in a row without a file change
RESOLVED_MS = 24 * 3_600_000
READ_MS = 30 * 60_000  # the events read at each refresh, as presence reads them
SCHEMA = """
CREATE TABLE IF NOT EXISTS stuck_resolved(signature TEXT PRIMARY KEY, session TEXT NOT NULL, at INTEGER NOT NULL);
"""


def _modified(event: dict[str, Any]) -> bool:
    found = event.get("file")
    return isinstance(found, dict) and found.get("op") == "modify" and bool(found.get("paths"))


TURNS_PREFIX = "turns"  # a signature of turns without a change: the anchor rescues it by the session's files


def turns_signature(session_key: str) -> str:
    return TURNS_PREFIX + hashlib.blake2b(json.dumps(["turns", session_key]).encode(), digest_size=12).hexdigest()


def _failure(event: dict[str, Any], command: str, code: int) -> str:
    from gitive.learn.pairs import failure_parts, signature

    out = event.get("output") or {}
    test, error, _ = failure_parts(command, out.get("text", "") if isinstance(out, dict) else "", code)
    return signature(command, test, error)


def in_session(events: Iterable[dict[str, Any]], session_key: str) -> tuple[list[str], dict[str, int]]:
    """(the signatures this session is stuck on now, signature -> when it passed) from its events in order."""
    from gitive.learn.pairs import run_of

    runs: dict[tuple[str, int], list[int]] = {}
    stuck: dict[str, str] = {}  # signature -> its normalized command
    passed: dict[str, int] = {}
    turns = 0
    for event in events:
        ts = int(event.get("ts") or 0)
        action = (event.get("event") or {}).get("action")
        if _modified(event):
            runs.clear()
            turns = 0
            continue
        if action == "turn.stop":
            turns += 1
            continue
        if action == "prompt.submitted":
            continue
        run = run_of(event) if action == "tool.completed" else None
        if run is None:
            continue
        command, code = run
        if code == 0:
            for sig in [s for s, c in stuck.items() if c == command]:
                passed[sig] = ts
                del stuck[sig]
            runs = {k: v for k, v in runs.items() if k[0] != command}
            continue
        times = [t for t in runs.get((command, code), []) if ts - t <= WINDOW_MS] + [ts]
        runs[(command, code)] = times
        if len(times) >= REPEATS:
            stuck[_failure(event, command, code)] = command
    found = sorted(stuck)
    if turns >= TURNS:
        found.append(turns_signature(session_key))
    return found, passed


def annotate(db: sqlite3.Connection, sessions: list[dict[str, Any]], events: list[dict[str, Any]] | None = None,
             now: int | None = None) -> list[dict[str, Any]]:
    """Add ``stuck`` to each live session (from this machine's events of the last 15 minutes) and return the
    resolved signatures to publish (``[{signature, until}]``), remembering new ones for 24 hours."""
    from gitive.capture import events as event_log

    now = now if now is not None else now_ms()
    db.executescript(SCHEMA)
    found = list(events) if events is not None else list(event_log.read(since_ms=now - READ_MS))
    by_session: dict[str, list[dict[str, Any]]] = {}
    for e in found:
        key = f"{(e.get('harness') or {}).get('name')}:{(e.get('session') or {}).get('id')}"
        by_session.setdefault(key, []).append(e)
    for s in sessions:
        key = s.get("session_key") or ""
        stuck, passed = in_session(by_session.get(key, []), key)
        s["stuck"] = stuck
        for sig, at in passed.items():
            db.execute("INSERT INTO stuck_resolved VALUES (?,?,?) ON CONFLICT(signature) DO UPDATE SET "
                       "at = MAX(at, excluded.at), session = excluded.session", (sig, key, at))
    db.execute("DELETE FROM stuck_resolved WHERE at < ?", (now - RESOLVED_MS,))
    return [{"signature": sig, "until": at + RESOLVED_MS}
            for sig, at in db.execute("SELECT signature, at FROM stuck_resolved ORDER BY signature")]
