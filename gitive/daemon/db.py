"""The daemon's own state: ``$GITIVE_HOME/daemon.sqlite`` (sessions, inbox, notices). Local, never shared."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from gitive.core.home import ensure_home

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions(key TEXT PRIMARY KEY, harness TEXT NOT NULL, session_id TEXT NOT NULL,
    name TEXT NOT NULL, repo TEXT, first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS inbox(id TEXT NOT NULL, sender TEXT NOT NULL, sender_machine TEXT NOT NULL,
    to_session TEXT NOT NULL, body TEXT NOT NULL, from_person INTEGER NOT NULL, reply_to TEXT,
    state TEXT NOT NULL, reason TEXT, received_at INTEGER NOT NULL, inflight_at INTEGER,
    delivered_at INTEGER, read_at INTEGER, ack_signed TEXT, sent_upto INTEGER NOT NULL DEFAULT 0,
    parts_done INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(id, to_session));
CREATE INDEX IF NOT EXISTS inbox_session ON inbox(to_session, state);
CREATE TABLE IF NOT EXISTS notices(key TEXT PRIMARY KEY, session TEXT NOT NULL, text TEXT NOT NULL,
    at INTEGER NOT NULL, state TEXT NOT NULL, inflight_at INTEGER);
CREATE TABLE IF NOT EXISTS repos(path TEXT PRIMARY KEY, last_seen INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS mail_fts USING fts5(id UNINDEXED, direction UNINDEXED, sender, recipients,
    body, at UNINDEXED, tokenize='porter unicode61');
CREATE TABLE IF NOT EXISTS claims(session TEXT NOT NULL, path TEXT NOT NULL, until INTEGER NOT NULL,
    note TEXT, PRIMARY KEY(session, path));
"""


_READY: set[str] = set()  # databases this process has already brought to the schema


# Columns added after the first release (an older database gets them at its next open), with the value an
# older row reads as.
ADDED = (("inbox", "sent_upto", "INTEGER NOT NULL DEFAULT 0"),  # characters of a split message delivered
         ("inbox", "parts_done", "INTEGER NOT NULL DEFAULT 0"))  # parts of it delivered


def _add_columns(conn: sqlite3.Connection) -> None:
    for table, column, kind in ADDED:
        if column not in {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}:
            try:
                conn.execute(f"ALTER TABLE {table} ADD COLUMN {column} {kind}")
            except sqlite3.OperationalError as exc:  # another process added it first
                if "duplicate column" not in str(exc):
                    raise


@contextmanager
def connect() -> Iterator[sqlite3.Connection]:
    path = ensure_home() / "daemon.sqlite"
    # Looked at before connecting, which creates the file: a database removed since this process last brought
    # one to the schema (a reset home, a restored test team) is new again and gets the schema.
    fresh = str(path) not in _READY or not path.exists()
    conn = sqlite3.connect(path, timeout=10, isolation_level=None)
    if fresh:
        conn.execute("PRAGMA journal_mode=WAL")  # persistent: once per database is enough
        conn.executescript(SCHEMA)
        _add_columns(conn)
        _READY.add(str(path))
    try:
        yield conn
    finally:
        conn.close()


def meta_get(conn: sqlite3.Connection, key: str, default: str = "") -> str:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else default


def meta_set(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute("INSERT INTO meta VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))
