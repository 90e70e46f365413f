"""The text shown for each lesson and its FTS5 row: the latest approving reviewer's edit, else the author's body."""

from __future__ import annotations

import json
import sqlite3


def effective_body(conn: sqlite3.Connection, lesson: str) -> tuple[str, str, str | None, str] | None:
    """The text to show: the latest approving reviewer's edit if any, else the author's body."""
    row = conn.execute(
        "SELECT b.text, b.applicability, b.quote, b.body_hash FROM valid_reviews r JOIN lesson_bodies b "
        "ON b.body_hash = r.edits WHERE r.about = ? AND r.approved = 1 ORDER BY r.at DESC LIMIT 1", (lesson,)
    ).fetchone()
    if row:
        return row
    return conn.execute(
        "SELECT b.text, b.applicability, b.quote, b.body_hash FROM lessons l JOIN lesson_bodies b "
        "ON b.body_hash = l.body_hash WHERE l.id = ?", (lesson,)
    ).fetchone()


def drop_text(conn: sqlite3.Connection, lesson: str) -> None:
    row = conn.execute("SELECT fts_rowid FROM lesson_text WHERE lesson = ?", (lesson,)).fetchone()
    if row:
        conn.execute("DELETE FROM lesson_fts WHERE rowid = ?", (row[0],))
        conn.execute("DELETE FROM lesson_text WHERE lesson = ?", (lesson,))


def refresh_fts(conn: sqlite3.Connection, lessons: set[str]) -> None:
    for lesson in lessons:
        drop_text(conn, lesson)
        found = effective_body(conn, lesson)
        if found is None:
            continue
        tags = conn.execute("SELECT tags FROM lessons WHERE id = ?", (lesson,)).fetchone()
        cur = conn.execute("INSERT INTO lesson_fts VALUES (?,?,?,?)",
                           (lesson, found[0], found[1], " ".join(json.loads(tags[0])) if tags else ""))
        conn.execute("INSERT INTO lesson_text VALUES (?,?,?,?)", (lesson, cur.lastrowid, found[0], found[1]))


