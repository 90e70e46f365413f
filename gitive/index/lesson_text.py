"""The text shown for each lesson and what search indexes of it.

``lesson_text`` says which body is shown (the latest approving reviewer's edit, else the author's body) by its
hash, so the text itself is stored once, in ``lesson_bodies``, and the hook reads it by key. ``lesson_fts``
indexes, under the same rowid: the text, applicability, tags, symptoms (how the problem shows up, written by
the proposer) and the words of the cited paths, each with camelCase identifiers split (``index.words``). A
lesson is re-indexed only when what would be indexed changed, so a citation or a plain approval costs nothing.

``lesson_fts`` keeps neither the text (``content=''``: it lives in ``lesson_bodies`` only) nor each row's
column sizes (``columnsize=0``), index step 0010: BM25 then costs no lookup per matching row (about ten
times faster) and, lessons being short, ranks without length normalization, which ranks them better
(benchmarks/recall.py). A contentless row is deleted by handing FTS5 the values it indexed, so a row is
always deleted before what it was built from changes (a body dropped, a cited file added): its document is
rebuilt from the row's shown body and checked against the digest in ``lesson_text``. A row that cannot be
rebuilt exactly is left behind, unreachable (no ``lesson_text`` row points at it) and counted; once such rows
pass ``STALE_SHARE`` of the index, the index is rebuilt.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3

from gitive.index import words

COLUMNS = ("text", "applicability", "tags", "symptoms", "paths")
FTS_TABLE = ("CREATE VIRTUAL TABLE {name} USING fts5(text, applicability, tags, symptoms, paths, content='', "
             "columnsize=0, tokenize = 'porter unicode61')")
STALE_SHARE, STALE_MIN = 0.1, 64  # rows left behind that make the search index rebuild itself
_STALE = "lesson_fts_stale"


def effective_body(conn: sqlite3.Connection, lesson: str) -> tuple[str, str, str | None, str] | None:
    """The text to show: the latest approving reviewer's edit if any, else the author's body."""
    row = conn.execute(
        "SELECT b.text, b.applicability, b.quote, b.body_hash FROM valid_reviews r JOIN lesson_bodies b "
        "ON b.body_hash = r.edits WHERE r.about = ? AND r.approved = 1 ORDER BY r.at DESC, r.author DESC, r.seq DESC "
        "LIMIT 1", (lesson,)
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


def _count(conn: sqlite3.Connection, key: str, by: int = 1) -> None:
    conn.execute("INSERT INTO meta VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET "
                 "value = CAST(value AS INTEGER) + excluded.value", (key, str(by)))


def drop_text(conn: sqlite3.Connection, lesson: str) -> None:
    """Forget what is shown and indexed of ``lesson``: its search row, its vectors, its ``lesson_text`` row.

    Call it before anything its search row was built from goes away (see the module's docstring).
    """
    row = conn.execute("SELECT fts_rowid, body_hash, digest FROM lesson_text WHERE lesson = ?", (lesson,)).fetchone()
    if row:
        rowid, shown, digest = row
        document = _document_of(conn, lesson, shown)
        if document is not None and _digest(shown, document) == digest:
            conn.execute(f"INSERT INTO lesson_fts(lesson_fts, rowid, {', '.join(COLUMNS)}) "
                         "VALUES ('delete', ?, ?, ?, ?, ?, ?)", (rowid, *document))
        else:
            _count(conn, _STALE)  # not what it indexed: deleting would corrupt the index; leave it behind
        conn.execute("DELETE FROM lesson_vectors WHERE fts_rowid = ?", (rowid,))
        conn.execute("DELETE FROM lesson_text WHERE lesson = ?", (lesson,))
        _count(conn, "lesson_text_drops")


def drop_text_of_body(conn: sqlite3.Connection, body_hash: str) -> None:
    """``drop_text`` of every lesson whose indexed document was built from body ``body_hash`` (its shown body,
    or the author's body whose symptoms it took): call before that body leaves ``lesson_bodies``."""
    for (lesson,) in conn.execute(
            "SELECT lesson FROM lesson_text WHERE body_hash = ?1 UNION "
            "SELECT t.lesson FROM lessons l JOIN lesson_text t ON t.lesson = l.id WHERE l.body_hash = ?1",
            (body_hash,)).fetchall():
        drop_text(conn, lesson)


def _columns(conn: sqlite3.Connection, lesson: str, shown: str, text: str, applicability: str) -> tuple[str, ...]:
    row = conn.execute("SELECT tags, rowid FROM lessons WHERE id = ?", (lesson,)).fetchone()
    tags = " ".join(json.loads(row[0])) if row else ""
    paths = [p for (p,) in conn.execute(
        "SELECT p.path FROM lesson_files f JOIN paths p ON p.id = f.path WHERE f.lesson = ? ORDER BY p.path",
        (row[1] if row else -1,))]
    return (words.indexed(text), words.indexed(applicability), words.indexed(tags),
            words.indexed("\n".join(symptoms(conn, lesson, shown))), words.path_words(paths))


def _document(conn: sqlite3.Connection, lesson: str) -> tuple[str, tuple[str, ...]] | None:
    """The shown body's hash and the indexed columns of ``lesson`` (None: no text to show)."""
    found = effective_body(conn, lesson)
    if found is None:
        return None
    text, applicability, _, shown = found
    return shown, _columns(conn, lesson, shown, text, applicability)


def _document_of(conn: sqlite3.Connection, lesson: str, shown: str) -> tuple[str, ...] | None:
    """The indexed columns of ``lesson`` showing body ``shown`` (None: that body is gone)."""
    row = conn.execute("SELECT text, applicability FROM lesson_bodies WHERE body_hash = ?", (shown,)).fetchone()
    return _columns(conn, lesson, shown, row[0], row[1]) if row else None


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
        _insert(conn, lesson, shown, digest, document)
    _compact_if_stale(conn)


def _insert(conn: sqlite3.Connection, lesson: str, shown: str, digest: str, document: tuple[str, ...]) -> None:
    # lesson_text's rowids only grow (AUTOINCREMENT), so "rows past N" is exactly what is new since N.
    cur = conn.execute("INSERT INTO lesson_text(lesson, body_hash, digest) VALUES (?,?,?)", (lesson, shown, digest))
    conn.execute(f"INSERT INTO lesson_fts(rowid, {', '.join(COLUMNS)}) VALUES (?,?,?,?,?,?)",
                 (cur.lastrowid, *document))


def _compact_if_stale(conn: sqlite3.Connection) -> None:
    """Rebuild ``lesson_fts`` once rows left behind pass ``STALE_SHARE`` of it (each under its own rowid, so
    vectors stay valid); a lesson whose shown body is gone loses its text, as ``refresh_fts`` would do."""
    stale = int((conn.execute("SELECT value FROM meta WHERE key = ?", (_STALE,)).fetchone() or ("0",))[0])
    if stale < STALE_MIN or stale < STALE_SHARE * (conn.execute("SELECT count(*) FROM lesson_text").fetchone()[0]):
        return
    conn.execute("INSERT INTO lesson_fts(lesson_fts) VALUES ('delete-all')")
    for rowid, lesson, shown in conn.execute("SELECT fts_rowid, lesson, body_hash FROM lesson_text").fetchall():
        document = _document_of(conn, lesson, shown)
        if document is None:
            conn.execute("DELETE FROM lesson_vectors WHERE fts_rowid = ?", (rowid,))
            conn.execute("DELETE FROM lesson_text WHERE fts_rowid = ?", (rowid,))
            _count(conn, "lesson_text_drops")
            continue
        conn.execute("UPDATE lesson_text SET digest = ? WHERE fts_rowid = ?", (_digest(shown, document), rowid))
        conn.execute(f"INSERT INTO lesson_fts(rowid, {', '.join(COLUMNS)}) VALUES (?,?,?,?,?,?)", (rowid, *document))
    conn.execute("DELETE FROM meta WHERE key = ?", (_STALE,))


def reindex_all(conn: sqlite3.Connection) -> None:
    """Build ``lesson_fts`` and ``lesson_text`` again for every lesson, in the schema of step 0005 (whose
    search index still held its text, so a plain ``DELETE`` empties it)."""
    conn.execute("DELETE FROM lesson_fts")
    conn.execute("DELETE FROM lesson_vectors")
    conn.execute("DELETE FROM lesson_text")
    for lesson in sorted(lesson for (lesson,) in conn.execute("SELECT id FROM lessons")):
        made = _document(conn, lesson)
        if made is not None:
            _insert(conn, lesson, made[0], _digest(*made), made[1])


def make_contentless(conn: sqlite3.Connection) -> None:
    """Index step 0010: the same rows, under the same rowids, in a search index without text or sizes."""
    conn.execute(FTS_TABLE.format(name="lesson_fts_v2"))
    conn.execute(f"INSERT INTO lesson_fts_v2(rowid, {', '.join(COLUMNS)}) SELECT rowid, {', '.join(COLUMNS)} "
                 "FROM lesson_fts")
    conn.execute("DROP TABLE lesson_fts")
    conn.execute("ALTER TABLE lesson_fts_v2 RENAME TO lesson_fts")


def indexed_rows(conn: sqlite3.Connection) -> set[int]:
    """The rowids ``lesson_fts`` holds terms for, read from its vocabulary (a contentless index cannot be
    scanned): for checks such as ``doctor`` and tests, never a hot path."""
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.lesson_fts_instances "
                 "USING fts5vocab(main, lesson_fts, 'instance')")
    return {doc for (doc,) in conn.execute("SELECT DISTINCT doc FROM temp.lesson_fts_instances")}
