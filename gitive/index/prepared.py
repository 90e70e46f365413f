"""Prepared work as any machine reads it from the index: the anchors' step records of each task, and the drafts
a person skipped. The anchor's ``gitive.anchor.prepared`` writes these; the gate's digest and its breakpoints
read them here, so the gate never imports the room that offers it items."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from gitive.index.queries import VERIFIED


def verified_of_kind(conn: sqlite3.Connection, kind: str, extra: str = "", args: tuple[Any, ...] = ()
             ) -> list[tuple[str, str, str, int, int, dict[str, Any], str]]:
    """(author, role, log, seq, at, record, person) of every verified ``kind`` entry, oldest first."""
    sql = VERIFIED.replace("SELECT e.author,", "SELECT m.role, e.author,", 1) + f" AND e.kind = ? {extra} " \
        "ORDER BY e.at, e.author, e.seq"
    out = []
    for row in conn.execute(sql, (kind, *args)):
        role, author, log, seq, _, _, at, envelope, person = row[:9]
        out.append((author, role, log, seq, at, json.loads(envelope)["body"]["record"], person))
    return out


def progress(conn: sqlite3.Connection) -> dict[str, list[dict[str, Any]]]:
    """task id -> its ``prepared`` records by anchor machines, oldest first (each with author and at)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for author, role, log, seq, at, rec, _ in verified_of_kind(conn, "prepared"):
        if role == "anchor" and log == "ledger":
            out.setdefault(rec["task"], []).append({**rec, "author": author, "at": at, "seq": seq})
    return out


def latest(conn: sqlite3.Connection) -> dict[str, dict[str, Any]]:
    """task id -> its newest ``prepared`` record."""
    return {task: steps[-1] for task, steps in progress(conn).items()}


def skips(index: sqlite3.Connection, person: str, since: int = 0) -> int:
    """How many prepared drafts ``person`` skipped since ``since`` (for their digest)."""
    rows = index.execute("SELECT r.note FROM valid_reviews r JOIN entries e ON e.author = r.author AND "
                         "e.log = r.log AND e.seq = r.seq WHERE r.approver = ? AND r.approved = 0 AND r.at >= ? "
                         "AND e.envelope LIKE '%\"diff_hash\"%'", (person, since)).fetchall()
    return sum(1 for (note,) in rows if note.strip().lower().startswith("skip"))
