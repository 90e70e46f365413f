"""How common each query word is among the indexed lessons, so search can leave out the words that say nothing.

FTS5 scores every lesson that matches any word of an OR query, so a word half the lessons contain costs a
pass over half the index while adding almost nothing to BM25 (its inverse document frequency is near zero).
Document frequencies come from an ``fts5vocab`` table over ``lesson_fts``; the stored terms are Porter stems,
so the query's words are stemmed by SQLite's own tokenizer (a scratch FTS5 table in the connection's ``temp``
schema) rather than by a second implementation here. A connection that cannot create temp tables (a
``query_only`` one) gets no frequencies, and search keeps every word.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

_SETUP = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.lesson_vocab USING fts5vocab(main, lesson_fts, 'row')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_words USING fts5(word, tokenize = 'porter unicode61')",
    "CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_vocab USING fts5vocab(temp, query_words, 'instance')",
)


def _ready(conn: sqlite3.Connection) -> bool:
    try:
        for statement in _SETUP:
            conn.execute(statement)
    except sqlite3.Error:
        return False
    return True


def frequencies(conn: sqlite3.Connection, found: Sequence[str], prefix_min: int) -> dict[str, int] | None:
    """Lessons containing each word (as a prefix when it has ``prefix_min`` characters or more, as search
    matches it); None when frequencies cannot be read on this connection."""
    if not found or not _ready(conn):
        return None
    try:
        conn.execute("DELETE FROM temp.query_words")
        for n, word in enumerate(found):
            conn.execute("INSERT INTO temp.query_words(rowid, word) VALUES (?, ?)", (n + 1, word))
        stems = conn.execute("SELECT doc, term FROM temp.query_vocab").fetchall()
        out = dict.fromkeys(found, 0)
        for rowid, stem in stems:
            word = found[rowid - 1]
            if len(word) >= prefix_min:
                (count,) = conn.execute("SELECT COALESCE(sum(doc), 0) FROM temp.lesson_vocab WHERE term >= ? AND "
                                        "term < ?", (stem, stem + "\U0010ffff")).fetchone()
            else:
                count = (conn.execute("SELECT doc FROM temp.lesson_vocab WHERE term = ?", (stem,)).fetchone() or (0,))[0]
            out[word] = max(out[word], int(count))
        conn.execute("DELETE FROM temp.query_words")
        return out
    except sqlite3.Error:
        return None


def shown(conn: sqlite3.Connection) -> int:
    """About how many lessons are indexed (the highest row number ever used: lessons are rarely re-indexed)."""
    row = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'lesson_text'").fetchone()
    return int(row[0]) if row else 0
