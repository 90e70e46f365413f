"""Reading lessons back: one lesson in full, or a filtered list, with state, provenance and age."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from gitive.core.clock import now_ms
from gitive.core.ids import id_prefix
from gitive.errors import GitiveError, quoted
from gitive.index import admitted, lesson_text
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
    body = effective_body(conn, row[0]) if row[14] != "retracted" else None
    stats = conn.execute("SELECT citations, successes FROM lesson_stats WHERE lesson = ?", (row[0],)).fetchone()
    return _shape(row, now, body, stats)


def _shape(row: tuple[Any, ...], now: int, body: tuple[Any, ...] | None, stats: tuple[int, int] | None
           ) -> dict[str, Any]:
    """A lesson as readers see it, from a ``_SELECT`` row, its shown body and its citation counts."""
    (lesson, author, log, seq, scope_kind, scope_value, kind, evidence, tags, supersedes, body_hash, hearsay,
     session, at, state, approver, reviewed_at, superseded_by, person, machine_name) = row
    if state == "proposed" and now - at > HELD_AFTER_MS:
        state = "held"
    if state == "retracted":
        body = None
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
        raise GitiveError(f"lesson id {quoted(prefix)} is too short: give at least 6 characters")
    hex_prefix = id_prefix(prefix)
    rows = [] if hex_prefix is None else conn.execute(
        "SELECT id FROM visible_lessons WHERE id LIKE ? LIMIT 3", (hex_prefix + "%",)).fetchall()
    if not rows:
        raise GitiveError(f"no lesson {quoted(prefix)} here; `gitive sync` fetches teammates' lessons")
    if len(rows) > 1:
        raise GitiveError(f"lesson id {quoted(prefix)} is ambiguous: give more characters")
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
    found.update(matched_on(conn, found))
    return found


def matched_on(conn: sqlite3.Connection, lesson: dict[str, Any]) -> dict[str, Any]:
    """What recall matches the lesson on, beyond its text: the symptoms its author gave (error lines, the
    questions it answers) and the files it is shown for (cited, or changed by a cited commit). A reviewer
    approves those too, so every surface that shows a lesson in full shows them."""
    shown = effective_body(conn, lesson["id"]) if lesson["state"] != "retracted" else None
    symptoms = lesson_text.symptoms(conn, lesson["id"], shown[3]) if shown else []
    files = [row[0] for row in conn.execute(
        "SELECT p.path FROM lessons l JOIN lesson_files f ON f.lesson = l.rowid JOIN paths p ON p.id = f.path "
        "WHERE l.id = ? ORDER BY p.path", (lesson["id"],))]
    return {"symptoms": symptoms, "files": files}


def listing(conn: sqlite3.Connection, *, states: tuple[str, ...] | None = None, scope: str | None = None,
            limit: int = 100, offset: int = 0) -> list[dict[str, Any]]:
    """Visible lessons newest first (ties by id, so pages never overlap), ``limit`` of them after skipping
    ``offset``, in ``states`` and ``scope``.

    Three queries whatever the size: how many lessons could match, one page of ids (the scope's
    ``(scope_kind, at)`` index walked newest first when most lessons match, the state index otherwise;
    admission checked on the way, :mod:`gitive.index.admitted`), and that page in full.
    """
    now = now_ms()
    ids = page_ids(conn, states=states, scope=scope, limit=limit, offset=offset, now=now)
    if not ids:
        return []
    by_id = {}
    for row in conn.execute(_PAGE + f" WHERE l.id IN ({', '.join('?' * len(ids))})", ids):
        by_id[row[0]] = _shape(row[:20], now, row[22:26] if row[25] is not None else None, row[20:22])
        by_id[row[0]]["sealed"] = bool(row[26])
    return [by_id[i] for i in ids if i in by_id]


_PAGE = _SELECT.replace("FROM visible_lessons l", "FROM lessons l").replace(
    "m.person, m.name", "m.person, m.name, COALESCE(st.citations, 0), COALESCE(st.successes, 0), "
    "b.text, b.applicability, b.quote, b.body_hash, EXISTS (SELECT 1 FROM sealed_entries s WHERE s.author = "
    "l.author AND s.log = l.log AND s.seq = l.seq)") + """
    LEFT JOIN lesson_stats st ON st.lesson = l.id
    LEFT JOIN lesson_bodies b ON b.body_hash = COALESCE((SELECT r.edits FROM valid_reviews r JOIN lesson_bodies e
        ON e.body_hash = r.edits WHERE r.about = l.id AND r.approved = 1 ORDER BY r.at DESC LIMIT 1), l.body_hash)
"""


# Relative cost of reading one lessons row by key and in storage order (measured at 10,000 lessons: ~20 and
# ~4 µs), to choose how a page is read.
_RANDOM_READ, _SEQUENTIAL_READ = 5, 1


def _state_filter(states: tuple[str, ...], now: int) -> tuple[str, list[Any]]:
    """SQL over ``s`` (lesson_status) and ``l`` (lessons) for ``states``, held told apart from proposed by age."""
    parts, args = [], []
    stored = sorted({s for s in states if s not in ("proposed", "held")})
    if stored:
        parts.append(f"s.state IN ({', '.join('?' * len(stored))})")
        args += stored
    fresh, held = "proposed" in states, "held" in states
    if fresh and held:
        parts.append("s.state = 'proposed'")
    elif fresh or held:
        parts.append(f"(s.state = 'proposed' AND l.at {'>=' if fresh else '<'} ?)")
        args.append(now - HELD_AFTER_MS)
    return "(" + " OR ".join(parts) + ")" if parts else "0", args


def page_ids(conn: sqlite3.Connection, *, states: tuple[str, ...] | None = None, scope: str | None = None,
             limit: int = 100, offset: int = 0, now: int | None = None) -> list[str]:
    """The ids :func:`listing` shows, newest first."""
    now = now if now is not None else now_ms()
    where, args = _state_filter(states, now) if states else ("1", [])
    where += " AND " + admitted.where(conn, "l")
    total = conn.execute("SELECT COUNT(*) FROM lesson_status").fetchone()[0]
    stored = sorted({"proposed" if s == "held" else s for s in states or ()})
    matching = conn.execute(f"SELECT COUNT(*) FROM lesson_status WHERE state IN ({', '.join('?' * len(stored))})",
                            stored).fetchone()[0] if states else total
    needed = limit + offset
    if not needed or not matching:
        return []
    scoped, scope_args = (" AND l.scope_kind = ?", [scope]) if scope else ("", [])
    walk, scan, by_state = needed * total / matching * _RANDOM_READ, total * _SEQUENTIAL_READ, matching * _RANDOM_READ
    if walk <= min(scan, by_state):  # a first page of a common state: each scope's index, newest first
        kinds = [scope] if scope else [r[0] for r in conn.execute("SELECT DISTINCT scope_kind FROM lessons")]
        arm = (f"SELECT * FROM (SELECT l.id, l.at FROM lessons l CROSS JOIN lesson_status s ON s.lesson = l.id "
               f"WHERE l.scope_kind = ? AND {where} ORDER BY l.at DESC, l.id DESC LIMIT ?)")
        sql = " UNION ALL ".join([arm] * len(kinds)) + " ORDER BY 2 DESC, 1 DESC LIMIT ? OFFSET ?"
        return [r[0] for r in conn.execute(sql, [x for k in kinds for x in (k, *args, needed)] + [limit, offset])]
    source = ("lesson_status s CROSS JOIN lessons l ON l.id = s.lesson" if by_state <= scan  # a rare state
              else "lessons l NOT INDEXED CROSS JOIN lesson_status s ON s.lesson = l.id")  # a deep page
    sql = f"SELECT l.id FROM {source} WHERE {where}{scoped} ORDER BY l.at DESC, l.id DESC LIMIT ? OFFSET ?"
    return [r[0] for r in conn.execute(sql, [*args, *scope_args, limit, offset])]
