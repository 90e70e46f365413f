"""Reading lessons back: one lesson in full, or a filtered list, with state, provenance and age."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from gitive.core.clock import now_ms
from gitive.errors import GitiveError
from gitive.index.lesson_text import effective_body

HELD_AFTER_MS = 24 * 3_600_000
STATES = ("proposed", "held", "verified", "rejected", "superseded", "retracted")

_SELECT = """
    SELECT l.id, l.author, l.log, l.seq, l.scope_kind, l.scope_value, l.kind, l.evidence, l.tags, l.supersedes,
           l.body_hash, l.hearsay, l.session, l.at, s.state, s.approver, s.reviewed_at, s.superseded_by,
           m.person, m.name
    FROM visible_lessons l JOIN lesson_status s ON s.lesson = l.id JOIN members m ON m.machine = l.author
"""


def _row(conn: sqlite3.Connection, row: tuple[Any, ...], now: int) -> dict[str, Any]:
    (lesson, author, log, seq, scope_kind, scope_value, kind, evidence, tags, supersedes, body_hash, hearsay,
     session, at, state, approver, reviewed_at, superseded_by, person, machine_name) = row
    if state == "proposed" and now - at > HELD_AFTER_MS:
        state = "held"
    body = effective_body(conn, lesson) if state != "retracted" else None
    stats = conn.execute("SELECT citations, successes FROM lesson_stats WHERE lesson = ?", (lesson,)).fetchone()
    citations, successes = stats or (0, 0)
    return {
        "id": lesson, "kind": kind, "state": state, "verified": state == "verified",
        "scope": scope_kind, "project": scope_value or None, "author": person, "author_machine": author,
        "machine_name": machine_name, "session": session, "reviewer": approver, "reviewed_at": reviewed_at,
        "at": at, "age_days": round((now - at) / 86_400_000, 1), "tags": json.loads(tags),
        "evidence": json.loads(evidence), "supersedes": supersedes, "superseded_by": superseded_by,
        "hearsay": bool(hearsay), "text": body[0] if body else None, "applicability": body[1] if body else None,
        "quote": json.loads(body[2]) if body and body[2] else None, "edited": bool(body and body[3] != body_hash),
        "body_hash": body_hash, "citations": citations, "successes": successes,
        "outcome_rate": (successes + 1) / (citations + 2), "log": log, "seq": seq,
    }


def resolve_id(conn: sqlite3.Connection, prefix: str) -> str:
    """A full lesson id from an unambiguous prefix (at least 6 characters).

    Raises:
        GitiveError: no lesson, or several, start with ``prefix``.
    """
    if len(prefix) < 6:
        raise GitiveError(f"lesson id {prefix!r} is too short: give at least 6 characters")
    rows = conn.execute("SELECT id FROM visible_lessons WHERE id LIKE ? LIMIT 3", (prefix.lower() + "%",)).fetchall()
    if not rows:
        raise GitiveError(f"no lesson {prefix!r} here; `gitive sync` fetches teammates' lessons")
    if len(rows) > 1:
        raise GitiveError(f"lesson id {prefix!r} is ambiguous: give more characters")
    return rows[0][0]


def get(conn: sqlite3.Connection, lesson: str) -> dict[str, Any]:
    row = conn.execute(_SELECT + " WHERE l.id = ?", (lesson,)).fetchone()
    if row is None:
        raise GitiveError(f"no lesson {lesson[:12]} here")
    found = _row(conn, row, now_ms())
    found["reviews"] = [
        {"approver": r[0], "approved": bool(r[1]), "note": r[2], "edited": r[3] is not None, "at": r[4]}
        for r in conn.execute("SELECT approver, approved, note, edits, at FROM valid_reviews WHERE about = ? "
                              "ORDER BY at", (lesson,))
    ]
    original = conn.execute("SELECT text FROM lesson_bodies WHERE body_hash = ?", (found["body_hash"],)).fetchone()
    found["original_text"] = original[0] if original else None
    found["sealed"] = conn.execute("SELECT 1 FROM sealed_entries WHERE author = ? AND log = ? AND seq = ?",
                                   (found["author_machine"], found["log"], found["seq"])).fetchone() is not None
    tomb = conn.execute("SELECT reason, at FROM tombstones WHERE lesson = ? AND applied = 1", (lesson,)).fetchone()
    found["retraction"] = {"reason": tomb[0], "at": tomb[1]} if tomb else None
    return found


def listing(conn: sqlite3.Connection, *, states: tuple[str, ...] | None = None, scope: str | None = None,
            limit: int = 100) -> list[dict[str, Any]]:
    sql, args = _SELECT + " WHERE 1=1", []
    if scope:
        sql += " AND l.scope_kind = ?"
        args.append(scope)
    if states:
        # Held is derived from proposed by age: ask SQL for the stored states, tell held apart below.
        stored = sorted({"proposed" if s == "held" else s for s in states})
        sql += f" AND s.state IN ({', '.join('?' * len(stored))})"
        args += stored
    sql += " ORDER BY l.at DESC"
    now = now_ms()
    out = []
    for row in conn.execute(sql, args):
        item = _row(conn, row, now)
        if states and item["state"] not in states:
            continue
        out.append(item)
        if len(out) >= limit:
            break
    return out
