"""Lesson tables of the index: projecting headers, reviews, tombstones, citations and project membership.

Rows are projected from structurally verified entries as they are ingested; readers go through the views of
migration 0006 (``admitted_entries``, ``valid_reviews``, ``lesson_stats``…) so that only entries the roster
admits at their position count (the roster may arrive after the lessons it vouches for). Bodies
(``index.bodies``), the shown text (``index.lesson_text``) and lifecycle states (``index.lesson_state``) are
brought up to date by :func:`after_ingest`.
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, Any

from gitive.core import gesture
from gitive.index import decisions, lesson_files, sealed
from gitive.index.bodies import attach_bodies
from gitive.index.db import TEAM_META, meta_get
from gitive.index.lesson_state import apply_tombstones, recompute_status
from gitive.index.lesson_text import drop_text, refresh_fts
from gitive.store.logs import Entry

if TYPE_CHECKING:
    from gitive.store.types import Repo

KINDS = ("lesson", "review", "tombstone", "project-member", "citation")


def _scope(scope: dict[str, Any]) -> tuple[str, str]:
    (name, value), = scope.items()
    return name, "" if value is True else str(value)


_GESTURE_TABLES = {"review": "reviews", "tombstone": "tombstones", "project-member": "project_members"}


def _gesture(conn: sqlite3.Connection, entry: Entry) -> str | None:
    """The person key whose gesture this entry's record validly carries; checked later if the team is not
    known yet (a fresh index reads roster logs before it has merged the roster)."""
    body = entry.body
    if "gesture" not in body["record"]:
        return None
    team_id = meta_get(conn, TEAM_META)
    if team_id is None:
        conn.execute("INSERT OR IGNORE INTO gestures_pending VALUES (?,?,?,?)",
                     (body["author"], body["log"], body["seq"], body["record"]["type"]))
        return None
    return gesture.key_of(team_id, body["author"], body["record"])


def check_pending_gestures(conn: sqlite3.Connection, team_id: str) -> None:
    """Check the gestures of rows projected before the team id was known."""
    for author, log, seq, kind in conn.execute("SELECT author, log, seq, kind FROM gestures_pending").fetchall():
        row = conn.execute("SELECT envelope FROM entries WHERE author = ? AND log = ? AND seq = ?",
                           (author, log, seq)).fetchone()
        record = json.loads(row[0])["body"]["record"] if row else None
        if record is not None and record["type"] == "sealed":  # projected from the record it opened to
            record = sealed.inner_record(conn, author, log, seq)
        key = gesture.key_of(team_id, author, record) if record is not None else None
        conn.execute(f"UPDATE {_GESTURE_TABLES[kind]} SET gesture = ? WHERE author = ? AND log = ? AND seq = ?",
                     (key, author, log, seq))
    conn.execute("DELETE FROM gestures_pending")


def project_entry(conn: sqlite3.Connection, entry: Entry) -> None:
    """Project one newly inserted entry of a lesson kind into its table.

    Rows hold what the entry says (and which person key its gesture verifies under); whether a row counts is
    decided when it is read, through ``admitted_entries`` and the roster's person keys (migration 0006).
    """
    body, record = entry.body, entry.body["record"]
    key = (body["author"], body["log"], body["seq"])
    kind = record["type"]
    if kind == "lesson":
        evidence = record["evidence"] if isinstance(record["evidence"], list) else []
        files = " ".join(sorted({e["path"] for e in evidence if isinstance(e, dict) and e.get("kind") == "file"
                                 and isinstance(e.get("path"), str)}))
        scope_kind, scope_value = _scope(body["scope"])
        cur = conn.execute(
            "INSERT OR IGNORE INTO lessons VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (record["id"], *key, scope_kind, scope_value, record["kind"], json.dumps(evidence), files,
             json.dumps(record["tags"]), record.get("supersedes"), record["body_hash"], int(record["hearsay"]),
             record.get("session"), body["at"]),
        )
        lesson_files.add(conn, record["id"], lesson_files.cited(evidence),
                         rowid=cur.lastrowid if cur.rowcount == 1 else None)
    elif kind == "review":
        conn.execute("INSERT OR IGNORE INTO reviews(author, log, seq, about, approver, approved, note, edits, "
                     "scope, at, gesture) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                     (*key, record["about"], record["approver"], int(record["approved"]), record["note"],
                      record.get("edits"), json.dumps(record.get("scope")), body["at"], _gesture(conn, entry)))
    elif kind == "tombstone":
        conn.execute("INSERT OR IGNORE INTO tombstones(author, log, seq, lesson, reason, bodies, at, applied, "
                     "gesture) VALUES (?,?,?,?,?,?,?,0,?)",
                     (*key, record["lesson"], record["reason"], json.dumps(record["bodies"]), body["at"],
                      _gesture(conn, entry)))
    elif kind == "citation":
        conn.execute("INSERT OR IGNORE INTO citations VALUES (?,?,?,?,?,?,?)",
                     (*key, record["lesson"], record["session"], int(record["success"]), body["at"]))
    elif kind == "project-member":
        conn.execute("INSERT OR IGNORE INTO project_members(author, log, seq, project, person, role, confirmed, "
                     "at, gesture) VALUES (?,?,?,?,?,?,?,?,?)",
                     (*key, record["project"], record["person"], record["role"], int(record["confirmed"]),
                      body["at"], _gesture(conn, entry)))
    if kind in _GESTURE_TABLES:
        decisions.note(conn, None, *key, body["at"], record)


def refresh_stats(conn: sqlite3.Connection, lessons: set[str] | None) -> None:
    """Recount citation and outcome stats of ``lessons`` (all when None) from admitted citations only: one per
    (machine, session), none from an unknown machine, a removed one past its heads, or a quarantined log."""
    where, args = "", ()
    if lessons is not None:
        if not lessons:
            return
        where, args = f" WHERE c.lesson IN ({','.join('?' * len(lessons))})", tuple(lessons)
        conn.execute(f"DELETE FROM lesson_stats WHERE lesson IN ({','.join('?' * len(lessons))})", args)
    else:
        conn.execute("DELETE FROM lesson_stats")
    conn.execute(
        "INSERT INTO lesson_stats SELECT c.lesson, COUNT(DISTINCT c.author || '/' || c.session), "
        "COUNT(DISTINCT CASE WHEN c.success THEN c.author || '/' || c.session END) FROM citations c "
        "JOIN admitted_entries a ON a.author = c.author AND a.log = c.log AND a.seq = c.seq"
        f"{where} GROUP BY c.lesson", args)


def _drop_quarantined_texts(conn: sqlite3.Connection) -> set[str]:
    """Forget the text of lessons written at or past the start of a quarantine (an equivocation): a rebuild,
    which may meet the two entries in either order, never holds it, so the incremental index must not either
    (issue 23). Returns the lessons whose text went."""
    gone: set[str] = set()
    # Quarantined logs are rare: with none there is nothing to scan (this runs after every ingest, a propose's
    # too); with some, start from them (CROSS JOIN keeps that order) instead of from every lesson.
    if not conn.execute("SELECT 1 FROM logs WHERE quarantined_from IS NOT NULL LIMIT 1").fetchone():
        return gone
    for (lesson,) in conn.execute(
            "SELECT DISTINCT l.id FROM logs g CROSS JOIN lessons l ON l.author = g.author AND l.log = g.log "
            "AND l.seq >= g.quarantined_from WHERE g.quarantined_from IS NOT NULL AND (EXISTS "
            "(SELECT 1 FROM lesson_bodies b WHERE b.lesson = l.id) OR EXISTS "
            "(SELECT 1 FROM lesson_text t WHERE t.lesson = l.id))").fetchall():
        drop_text(conn, lesson)  # first: its search row is deleted by what it indexed
        conn.execute("DELETE FROM lesson_bodies WHERE lesson = ?", (lesson,))
        gone.add(lesson)
    return gone


def after_ingest(conn: sqlite3.Connection, stores: list[Repo], touched: set[str],
                 roster_changed: bool = False, *, team_id: str, keyring: sealed.Keyring | None = None) -> None:
    """Bring bodies, tombstones, states and the text index up to date after new entries or bodies arrived
    (sealed bodies too, with this machine's ``keyring``)."""
    retracted, lifted = apply_tombstones(conn, recheck=roster_changed)
    changed = attach_bodies(conn, stores, team_id, touched | lifted, keyring) | touched | lifted
    hidden = _drop_quarantined_texts(conn)
    changed -= hidden
    lesson_files.resolve_commits(conn, stores, touched)
    if roster_changed:  # whose reviews count changed: any lesson may show another edit now (digest-checked)
        changed |= {lesson for (lesson,) in conn.execute("SELECT lesson FROM lesson_text")}
    refresh_fts(conn, changed - retracted)
    recompute_status(conn, None if roster_changed else changed | retracted)
    refresh_stats(conn, None if roster_changed else touched)


