"""The quiet pass's local store: drafts, their stored scores and the decisions on them (``$GITIVE_HOME/learn.sqlite``).

Nothing here is shared: drafts carry content from this machine's own event log (error output, commands) and
stay in this file until the person accepts one, which proposes it as a lesson. Scores are stored whether or not
a draft passes the gate, keyed by the rubric's hash, so candidates can be rebuilt with other thresholds without
scoring again; a draft's id never contains a score.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gitive.core.clock import now_ms
from gitive.core.home import gitive_home

FILE = "learn.sqlite"
STATES = ("new", "accepted", "skipped")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS drafts(
    id TEXT PRIMARY KEY, kind TEXT NOT NULL, session TEXT NOT NULL, harness TEXT NOT NULL, repo TEXT NOT NULL,
    signature TEXT NOT NULL, evidence TEXT NOT NULL, files TEXT NOT NULL, lesson_kind TEXT NOT NULL,
    text TEXT NOT NULL, applicability TEXT NOT NULL, symptoms TEXT NOT NULL, writer TEXT NOT NULL,
    detail TEXT NOT NULL, created INTEGER NOT NULL, state TEXT NOT NULL DEFAULT 'new', decided_at INTEGER,
    lesson TEXT);
CREATE INDEX IF NOT EXISTS drafts_state ON drafts(state, created);
CREATE TABLE IF NOT EXISTS evaluations(
    draft TEXT NOT NULL, rubric TEXT NOT NULL, scorer TEXT NOT NULL, scores TEXT NOT NULL, at INTEGER NOT NULL,
    PRIMARY KEY(draft, rubric, scorer));
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)
"""


def path() -> Path:
    return gitive_home() / FILE


@contextmanager
def connect(at: Path | None = None) -> Iterator[sqlite3.Connection]:
    """The store, created on first use (mode 0600: it holds local content); commits on success."""
    target = at or path()
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fresh = not target.exists()
    conn = sqlite3.connect(target, timeout=30, isolation_level=None)
    if fresh:
        target.chmod(0o600)
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        for statement in _SCHEMA.split(";"):
            conn.execute(statement)
        conn.execute("BEGIN IMMEDIATE")
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    finally:
        conn.close()


def meta_get(conn: sqlite3.Connection, key: str, default: str = "") -> str:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else default


def meta_set(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute("INSERT INTO meta VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", (key, value))


_COLUMNS = ("id", "kind", "session", "harness", "repo", "signature", "evidence", "files", "lesson_kind", "text",
            "applicability", "symptoms", "writer", "detail", "created", "state", "decided_at", "lesson")
_JSON = ("evidence", "files", "symptoms", "detail")


def add(conn: sqlite3.Connection, draft: dict[str, Any]) -> bool:
    """Store a new draft; False when a draft with its id exists (the same evidence drafted again)."""
    row = {**draft, "created": draft.get("created") or now_ms(), "state": "new", "decided_at": None, "lesson": None}
    values = [json.dumps(row[c]) if c in _JSON else row[c] for c in _COLUMNS]
    before = conn.total_changes
    conn.execute(f"INSERT OR IGNORE INTO drafts({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})",
                 values)
    return conn.total_changes > before


def _row(row: tuple[Any, ...]) -> dict[str, Any]:
    out = dict(zip(_COLUMNS, row, strict=True))
    for column in _JSON:
        out[column] = json.loads(out[column])
    return out


def get(conn: sqlite3.Connection, draft: str) -> dict[str, Any] | None:
    row = conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM drafts WHERE id = ?", (draft,)).fetchone()
    return _row(row) if row else None


def listing(conn: sqlite3.Connection, states: tuple[str, ...] = STATES) -> list[dict[str, Any]]:
    rows = conn.execute(f"SELECT {', '.join(_COLUMNS)} FROM drafts WHERE state IN ({', '.join('?' * len(states))}) "
                        "ORDER BY created, id", states).fetchall()
    return [_row(r) for r in rows]


def update_text(conn: sqlite3.Connection, draft: str, text: str, applicability: str | None = None) -> None:
    conn.execute("UPDATE drafts SET text = ?, applicability = COALESCE(?, applicability), writer = 'edited' "
                 "WHERE id = ?", (text, applicability, draft))


def decide(conn: sqlite3.Connection, draft: str, state: str, lesson: str | None = None) -> None:
    assert state in ("accepted", "skipped")
    conn.execute("UPDATE drafts SET state = ?, decided_at = ?, lesson = ? WHERE id = ?",
                 (state, now_ms(), lesson, draft))


def counts(conn: sqlite3.Connection) -> dict[str, int]:
    found = dict.fromkeys(STATES, 0)
    found.update(dict(conn.execute("SELECT state, count(*) FROM drafts GROUP BY state").fetchall()))
    return found


def save_scores(conn: sqlite3.Connection, draft: str, rubric: str, scorer: str, scores: dict[str, int]) -> None:
    """Keep an evaluation, whether or not it passes any gate (the discard stays auditable)."""
    conn.execute("INSERT INTO evaluations VALUES (?,?,?,?,?) ON CONFLICT(draft, rubric, scorer) DO UPDATE SET "
                 "scores = excluded.scores, at = excluded.at", (draft, rubric, scorer, json.dumps(scores), now_ms()))


def scores(conn: sqlite3.Connection, rubric: str) -> dict[str, dict[str, int]]:
    """Every stored evaluation under ``rubric``, per draft (a model scorer's row wins over the heuristic's)."""
    out: dict[str, dict[str, int]] = {}
    for draft, found in conn.execute(
            "SELECT draft, scores FROM evaluations WHERE rubric = ? ORDER BY scorer = 'heuristic' DESC",
            (rubric,)):
        out[draft] = json.loads(found)
    return out
