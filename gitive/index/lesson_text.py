"""The text shown for each lesson and what search indexes of it.

``lesson_text`` says which body is shown (the latest approving reviewer's edit, else the author's body) by its
hash, so the text itself is stored once, in ``lesson_bodies``, and the hook reads it by key. ``lesson_fts``
indexes, under the same rowid: the text, applicability, tags, symptoms (how the problem shows up, written by
the proposer) and the words of the cited paths, each with camelCase identifiers split (``index.words``). A
lesson is re-indexed only when what would be indexed changed, so a citation or a plain approval costs nothing.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3

from gitive.index import words

COLUMNS = ("text", "applicability", "tags", "symptoms", "paths")


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


def symptoms(conn: sqlite3.Connection, lesson: str, shown_hash: str) -> list[str]:
    """The shown body's symptoms, else the author's (a reviewer's edit of the text keeps what the author saw)."""
    for (listed,) in conn.execute(
            "SELECT b.symptoms FROM lesson_bodies b WHERE b.body_hash = ? UNION ALL "
            "SELECT b.symptoms FROM lessons l JOIN lesson_bodies b ON b.body_hash = l.body_hash WHERE l.id = ?",
            (shown_hash, lesson)):
        if listed:
            return list(json.loads(listed))
    return []


def drop_text(conn: sqlite3.Connection, lesson: str) -> None:
    """Forget what is shown and indexed of ``lesson``: its search row, its vectors, its ``lesson_text`` row."""
    row = conn.execute("SELECT fts_rowid FROM lesson_text WHERE lesson = ?", (lesson,)).fetchone()
    if row:
        conn.execute("DELETE FROM lesson_fts WHERE rowid = ?", (row[0],))
        conn.execute("DELETE FROM lesson_vectors WHERE fts_rowid = ?", (row[0],))
        conn.execute("DELETE FROM lesson_text WHERE lesson = ?", (lesson,))
        conn.execute("INSERT INTO meta VALUES ('lesson_text_drops', '1') ON CONFLICT(key) DO UPDATE SET "
                     "value = CAST(value AS INTEGER) + 1")


def _document(conn: sqlite3.Connection, lesson: str) -> tuple[str, tuple[str, ...]] | None:
    """The shown body's hash and the indexed columns of ``lesson`` (None: no text to show)."""
    found = effective_body(conn, lesson)
    if found is None:
        return None
    text, applicability, _, shown = found
    row = conn.execute("SELECT tags, rowid FROM lessons WHERE id = ?", (lesson,)).fetchone()
    tags = " ".join(json.loads(row[0])) if row else ""
    paths = [p for (p,) in conn.execute(
        "SELECT p.path FROM lesson_files f JOIN paths p ON p.id = f.path WHERE f.lesson = ? ORDER BY p.path",
        (row[1] if row else -1,))]
    return shown, (words.indexed(text), words.indexed(applicability), words.indexed(tags),
                   words.indexed("\n".join(symptoms(conn, lesson, shown))), words.path_words(paths))


def _digest(shown: str, document: tuple[str, ...]) -> str:
    return hashlib.blake2b(json.dumps([shown, *document]).encode(), digest_size=12).hexdigest()


def refresh_fts(conn: sqlite3.Connection, lessons: set[str]) -> None:
    """Index the shown text of ``lessons`` again where it changed; drop the rows of lessons with none."""
    for lesson in sorted(lessons):
        made = _document(conn, lesson)
        if made is None:
            drop_text(conn, lesson)
            continue
        shown, document = made
        digest = _digest(shown, document)
        row = conn.execute("SELECT digest FROM lesson_text WHERE lesson = ?", (lesson,)).fetchone()
        if row and row[0] == digest:
            continue
        drop_text(conn, lesson)
        # lesson_text's rowids only grow (AUTOINCREMENT), so "rows past N" is exactly what is new since N.
        cur = conn.execute("INSERT INTO lesson_text(lesson, body_hash, digest) VALUES (?,?,?)",
                           (lesson, shown, digest))
        conn.execute(f"INSERT INTO lesson_fts(rowid, {', '.join(COLUMNS)}) VALUES (?,?,?,?,?,?)",
                     (cur.lastrowid, *document))


def reindex_all(conn: sqlite3.Connection) -> None:
    """Build ``lesson_fts`` and ``lesson_text`` again for every lesson (a schema step calls this)."""
    conn.execute("DELETE FROM lesson_fts")
    conn.execute("DELETE FROM lesson_vectors")
    conn.execute("DELETE FROM lesson_text")
    refresh_fts(conn, {lesson for (lesson,) in conn.execute("SELECT id FROM lessons")})
