"""Reading the verified union: entries the roster admits at their position, outside any quarantine."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

# An entry counts when the roster admits its author at that position in its log (not inside a removal's gap,
# docs/verification.md §3) and its log is not quarantined at or below its seq (equivocation): the
# `admitted_entries` view of index migration 0006.
# The envelope column holds {"body": {"record": ...}} (a roster entry's whole envelope): read the record there,
# and everything else from the columns (index.entries).
_SELECT = """
    SELECT e.author, e.log, e.seq, e.commit_id, e.kind, e.at, e.envelope, m.person, m.name{more}
    FROM admitted_entries e
    JOIN members m ON m.machine = e.author
    WHERE 1 = 1
"""
VERIFIED = _SELECT.format(more="")


def verified_entries(conn: sqlite3.Connection, *, log: str | None = None, kind: str | None = None,
                     author: str | None = None, limit: int = 100, after_seq: int | None = None,
                     ) -> list[dict[str, Any]]:
    """Verified entries, newest first; ``after_seq`` (with ``author`` and ``log``) keeps those past a cursor."""
    sql, args = _SELECT.format(more=", e.scope"), []
    for column, value in (("e.log", log), ("e.kind", kind), ("e.author", author)):
        if value is not None:
            sql += f" AND {column} = ?"
            args.append(value)
    if after_seq is not None:
        sql += " AND e.seq > ?"
        args.append(after_seq)
    sql += " ORDER BY e.at DESC, e.author, e.log, e.seq DESC LIMIT ?"
    args.append(limit)
    out = []
    for author_, log_, seq, commit, kind_, at, envelope, person, name, scope in conn.execute(sql, args):
        out.append({"author": author_, "person": person, "machine_name": name, "log": log_, "seq": seq,
                    "commit": commit, "kind": kind_, "at": at, "record": json.loads(envelope)["body"]["record"],
                    "scope": json.loads(scope)})
    return out


def members(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    rows = conn.execute("SELECT machine, person, name, role, active, emails, ts, via, depth FROM members "
                        "ORDER BY person, name, machine").fetchall()
    return [{"machine": r[0], "person": r[1], "name": r[2], "role": r[3], "active": bool(r[4]),
             "emails": json.loads(r[5]), "ts": r[6], "via": r[7], "depth": r[8]} for r in rows]


def problems(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    rows = conn.execute("SELECT kind, source, commit_id, author, log, seq, detail, first_seen, last_seen "
                        "FROM problems ORDER BY kind, source, seq").fetchall()
    keys = ("kind", "source", "commit", "author", "log", "seq", "detail", "first_seen", "last_seen")
    return [dict(zip(keys, r, strict=True)) for r in rows]


def unknown_signers(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    rows = conn.execute("SELECT author, COUNT(*) FROM entries WHERE author NOT IN (SELECT machine FROM members) "
                        "GROUP BY author ORDER BY author").fetchall()
    return [{"author": a, "entries": n} for a, n in rows]


def counts(conn: sqlite3.Connection) -> dict[str, int]:
    entries = conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0]
    logs = conn.execute("SELECT COUNT(*) FROM logs").fetchone()[0]
    return {"entries": entries, "logs": logs}
