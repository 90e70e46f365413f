"""Making retracted text leave the index file's bytes, not only its tables (issue 23, DESIGN §1.8).

Deleting a row is not forgetting it. SQLite leaves a deleted row's bytes in the page it sat on and in free
pages; the WAL keeps every page version written since the last reset; and FTS5 keeps a deleted document's
terms in its segments (only a delete marker is added) until the segments are merged. So on every writable
connection ``secure_delete`` is on (deleted cells and freed pages are overwritten with zeros; SQLite 3.40 has
no FTS5 ``secure-delete`` option), and once a tombstone has been applied the search index is merged into one
segment (``optimize`` drops the deleted terms) and the WAL is checkpointed and truncated to zero bytes.

The work is marked inside the transaction that applied the tombstone and done after its commit, by whoever
commits next; a checkpoint blocked by a reader keeps the mark, so the next writer tries again.
"""

from __future__ import annotations

import sqlite3

DUE = "scrub_due"


def mark(conn: sqlite3.Connection) -> None:
    """Ask for a scrub after the current transaction commits (call where text was deleted for good)."""
    conn.execute("INSERT OR REPLACE INTO meta VALUES (?, '1')", (DUE,))


def due(conn: sqlite3.Connection) -> bool:
    """Whether a retraction asked for a scrub that has not been done yet."""
    return conn.execute("SELECT 1 FROM meta WHERE key = ?", (DUE,)).fetchone() is not None


def scrub_if_due(conn: sqlite3.Connection) -> bool:
    """Merge the search index and truncate the WAL if a retraction asked for it; true when the file is clean.

    Runs only outside a transaction. Atomic per step: the merge commits on its own, the checkpoint either
    completes (the mark is cleared) or leaves the mark for the next writer.
    """
    if conn.in_transaction or not due(conn):
        return False
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("INSERT INTO lesson_fts(lesson_fts) VALUES ('optimize')")
        conn.execute("DELETE FROM meta WHERE key = ?", (DUE,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    if busy:  # a reader holds an older snapshot: its pages stay in the WAL until the next writer's try
        with conn:
            mark(conn)
        return False
    return True
