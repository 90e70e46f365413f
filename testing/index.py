"""An index fed straight from signed envelopes, without git: for property tests of what projections decide.

The envelopes are taken as authentic (the chain checks of ``store.verify`` are tested on real repositories
elsewhere); everything after that is gitive's own code: the index schema with every migration step, the
lesson projections, the roster merge and the views that decide what counts.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from gitive.core import canonical
from gitive.index import db as index_db
from gitive.index import envelopes as envelope_rows
from gitive.index import lessons as lesson_tables
from gitive.index import sealed, unsealing
from gitive.index.problems import Report
from gitive.index.roster import recompute_roster
from gitive.store.logs import Entry


def build(envelopes: list[dict[str, Any]], team_id: str, founder: str,
          conn: sqlite3.Connection | None = None, key: Any = None) -> sqlite3.Connection:
    """An in-memory index holding ``envelopes`` (any order), with roster, states and stats recomputed.

    Given ``conn``, the envelopes are added to that index instead, as a later ingest would add them. Given a
    machine ``key``, the sealed entries that key reaches are opened (``gitive.index.sealed``), as on that machine.
    """
    if conn is None:
        conn = sqlite3.connect(":memory:", isolation_level=None)
        index_db._migrate(conn, index_db.MIGRATIONS)
    touched: set[str] = set()
    for env in sorted(envelopes, key=lambda e: (e["body"]["author"], e["body"]["log"], e["body"]["seq"])):
        body = env["body"]
        raw = canonical.dumps(env).decode()
        commit = f"{body['author'][:20]}{body['log'][:4]:0<4}{body['seq']:016d}"
        entry = Entry(commit, None, env, raw.encode())
        conn.execute("INSERT OR IGNORE INTO entries(author, log, seq, commit_id, kind, at, scope, envelope, hash) "
                     "VALUES (?,?,?,?,?,?,?,?,?)", (body["author"], body["log"], body["seq"], commit,
                                                    body["record"]["type"], body["at"],
                                                    json.dumps(body["scope"], sort_keys=True),
                                                    envelope_rows.stored_envelope(entry), entry.hash))
        conn.execute("INSERT INTO logs VALUES (?, ?, ?, ?, NULL) ON CONFLICT(author, log) DO UPDATE SET "
                     "hwm = MAX(hwm, excluded.hwm)", (body["author"], body["log"], body["seq"], commit))
        if body["record"]["type"] in lesson_tables.KINDS:
            lesson_tables.project_entry(conn, entry)
            record = body["record"]
            touched.add(record.get("id") or record.get("about") or record.get("lesson") or "")
        elif body["record"]["type"] in sealed.KINDS:
            sealed.record(conn, Entry(commit, None, env, raw.encode()))
    report = Report()
    recompute_roster(conn, team_id, founder, report)
    keyring = sealed.Keyring(conn, key) if key is not None else None
    unsealing.open_waiting(conn, keyring, report)
    touched |= report.lessons_touched
    lesson_tables.after_ingest(conn, [], touched - {""}, report.roster_changed, team_id=team_id, keyring=keyring)
    return conn


PROJECTIONS = ("members", "member_gaps", "member_time_gaps", "person_keys", "admins", "gesture_exempt",
               "lesson_status", "lesson_stats", "valid_reviews", "valid_project_members", "visible_lessons",
               "admitted_entries")


def projections(conn: sqlite3.Connection) -> dict[str, list[tuple[Any, ...]]]:
    """Everything the authority rules decide, comparable between an incremental index and a rebuild."""
    out = {}
    for name in PROJECTIONS:
        rows = conn.execute(f"SELECT * FROM {name}").fetchall()
        out[name] = sorted(rows, key=repr)
    out["applied_tombstones"] = sorted(conn.execute("SELECT author, log, seq FROM tombstones WHERE applied = 1"))
    return out


def state(conn: sqlite3.Connection, lesson: str) -> str | None:
    row = conn.execute("SELECT state FROM lesson_status WHERE lesson = ?", (lesson,)).fetchone()
    return row[0] if row else None


def stats(conn: sqlite3.Connection, lesson: str) -> tuple[int, int]:
    row = conn.execute("SELECT citations, successes FROM lesson_stats WHERE lesson = ?", (lesson,)).fetchone()
    return (row[0], row[1]) if row else (0, 0)


def counted(conn: sqlite3.Connection, author: str, log: str, seq: int) -> bool:
    """Whether the entry at that position is admitted (``admitted_entries``)."""
    return conn.execute("SELECT 1 FROM admitted_entries WHERE author = ? AND log = ? AND seq = ?",
                        (author, log, seq)).fetchone() is not None
