"""Lesson tables of the index: projecting headers, reviews, tombstones, citations and project membership.

Rows are projected from structurally verified entries as they are ingested; readers join ``members`` so that
only admitted authors count (the roster may arrive after the lessons it vouches for). Bodies
(``index.bodies``), the shown text (``index.lesson_text``) and lifecycle states (``index.lesson_state``) are
brought up to date by :func:`after_ingest`.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pygit2

from gitive.index import lesson_files
from gitive.index.bodies import attach_bodies
from gitive.index.lesson_state import apply_tombstones, recompute_status
from gitive.index.lesson_text import refresh_fts
from gitive.store.logs import Entry

KINDS = ("lesson", "review", "tombstone", "project-member", "citation")


def _scope(scope: dict[str, Any]) -> tuple[str, str]:
    (name, value), = scope.items()
    return name, "" if value is True else str(value)


def project_entry(conn: sqlite3.Connection, entry: Entry) -> None:
    """Project one newly inserted entry of a lesson kind into its table."""
    body, record = entry.body, entry.body["record"]
    key = (body["author"], body["log"], body["seq"])
    kind = record["type"]
    if kind == "lesson":
        evidence = record["evidence"] if isinstance(record["evidence"], list) else []
        files = " ".join(sorted({e["path"] for e in evidence if isinstance(e, dict) and e.get("kind") == "file"
                                 and isinstance(e.get("path"), str)}))
        scope_kind, scope_value = _scope(body["scope"])
        conn.execute(
            "INSERT OR IGNORE INTO lessons VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (record["id"], *key, scope_kind, scope_value, record["kind"], json.dumps(evidence), files,
             json.dumps(record["tags"]), record.get("supersedes"), record["body_hash"], int(record["hearsay"]),
             record.get("session"), body["at"]),
        )
        lesson_files.add(conn, record["id"], lesson_files.cited(evidence))
    elif kind == "review":
        conn.execute("INSERT OR IGNORE INTO reviews VALUES (?,?,?,?,?,?,?,?,?,?)",
                     (*key, record["about"], record["approver"], int(record["approved"]), record["note"],
                      record.get("edits"), json.dumps(record.get("scope")), body["at"]))
    elif kind == "tombstone":
        conn.execute("INSERT OR IGNORE INTO tombstones VALUES (?,?,?,?,?,?,?,0)",
                     (*key, record["lesson"], record["reason"], json.dumps(record["bodies"]), body["at"]))
    elif kind == "citation":
        conn.execute("INSERT INTO lesson_stats VALUES (?, 1, ?) ON CONFLICT(lesson) DO UPDATE SET "
                     "citations = citations + 1, successes = successes + excluded.successes",
                     (record["lesson"], int(record["success"])))
    elif kind == "project-member":
        conn.execute("INSERT OR IGNORE INTO project_members VALUES (?,?,?,?,?,?,?,?)",
                     (*key, record["project"], record["person"], record["role"], int(record["confirmed"]),
                      body["at"]))


def after_ingest(conn: sqlite3.Connection, stores: list[pygit2.Repository], touched: set[str],
                 roster_changed: bool = False, *, team_id: str) -> None:
    """Bring bodies, tombstones, states and the text index up to date after new entries or bodies arrived."""
    retracted = apply_tombstones(conn)
    changed = attach_bodies(conn, stores, team_id, touched) | touched
    lesson_files.resolve_commits(conn, stores, touched)
    refresh_fts(conn, changed - retracted)
    recompute_status(conn, None if roster_changed else changed | retracted)


