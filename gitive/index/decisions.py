"""Decisions in the index: which copy of a gestured record counts, and in what order (gitive/core/decisions.py).

Every gestured decision record gets a row in ``decisions``: its subject, gesture signature, signed stamp and
the time its entry claims. ``counted`` says how readers take it:

- ``1``: it counts (the first appearance of its gesture, dated within the skew);
- ``0``: a *replay*, another copy of a gesture already seen (reported as ``replay`` to ``gitive doctor``);
- ``2``: dated more than the skew ahead: it waits, and :func:`ripen` counts it once its time comes.

The first appearance is the copy with the lowest (entry time, log, seq) among those whose gesture verifies for
their own author (a copy lifted into another machine's log never does, and counts nowhere): a function of the
copies alone, so the incremental index equals a rebuild. For a stamped decision which copy counts changes nothing but the reference
to it (an authorization is spent by gesture, not by copy); its order comes from its stamp.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from gitive.core import decisions
from gitive.core.clock import now_ms
from gitive.index.problems import Report, record_problem

COUNTS, REPLAY, WAITING = 1, 0, 2
REPLAY_PROBLEM = "replay"
# Decision kinds projected by index.entries; reviews, tombstones and project grants by index.lessons.
DECIDING = tuple(k for k in decisions.KINDS if k not in ("review", "tombstone", "project-member"))

SCHEMA = """
    CREATE TABLE decisions(author TEXT NOT NULL, log TEXT NOT NULL, seq INTEGER NOT NULL, kind TEXT NOT NULL,
                           subject TEXT NOT NULL, gesture TEXT NOT NULL, n INTEGER, decided_at INTEGER,
                           at INTEGER NOT NULL, counted INTEGER NOT NULL, PRIMARY KEY(author, log, seq));
    CREATE INDEX decisions_gesture ON decisions(gesture);
    CREATE INDEX decisions_subject ON decisions(subject);
    CREATE INDEX decisions_waiting ON decisions(decided_at) WHERE counted = 2
"""

# Only copies that count: every view of a decision kind excludes replays and decisions not yet due.
UNCOUNTED = ("NOT EXISTS (SELECT 1 FROM decisions d WHERE d.author = {t}.author AND d.log = {t}.log "
             "AND d.seq = {t}.seq AND d.counted != 1)")


def migrate(conn: sqlite3.Connection) -> None:
    """Index step 0012: the table, filled from the decision records the index already holds (v1 ones too)."""
    for statement in SCHEMA.split(";"):
        conn.execute(statement)
    kinds = decisions.KINDS
    rows = conn.execute(f"SELECT author, log, seq, at, envelope FROM entries WHERE kind IN "
                        f"({','.join('?' * len(kinds))}) ORDER BY rowid", kinds).fetchall()
    # sealed ones as this machine opened them (index.sealed: state 1 is open)
    rows += conn.execute("SELECT s.author, s.log, s.seq, e.at, s.inner FROM sealed_entries s JOIN entries e "
                         "ON e.author = s.author AND e.log = s.log AND e.seq = s.seq WHERE s.state = 1").fetchall()
    for author, log, seq, at, text in rows:
        record = json.loads(text)
        record = record["body"]["record"] if "body" in record else record
        note(conn, None, author, log, seq, at, record)


def note(conn: sqlite3.Connection, report: Report | None, author: str, log: str, seq: int, at: int,
         record: dict[str, Any]) -> str | None:
    """Record one projected entry if it is a gestured decision, and recount the copies of its gesture.

    Returns the decision's subject (None: not a gestured decision).
    """
    sig, subject = decisions.gesture_id(record), decisions.subject(record)
    if sig is None or subject is None:
        return None
    stamp = decisions.stamp_of(record)
    if not _bound(conn, author, record):
        # A gesture binds the machine that wrote it, so a copy lifted into another machine's log does not verify
        # there. Such a copy counts nowhere and, above all, never competes for the first appearance: a member's
        # agent could otherwise append an admin's decision to its own log, dated a day back, and make the real
        # one a "replay" (seen on reviews: a verified lesson went back to proposed on every reader).
        conn.execute("INSERT OR IGNORE INTO decisions VALUES (?,?,?,?,?,?,?,?,?,?)",
                     (author, log, seq, record["type"], subject, f"unbound/{author}/{sig}",
                      stamp.n if stamp else None, stamp.at if stamp else None, at, REPLAY))
        return subject
    conn.execute("INSERT OR IGNORE INTO decisions VALUES (?,?,?,?,?,?,?,?,?,?)",
                 (author, log, seq, record["type"], subject, sig, stamp.n if stamp else None,
                  stamp.at if stamp else None, at, COUNTS))
    _recount(conn, report or Report(), sig, now_ms())
    return subject


def _bound(conn: sqlite3.Connection, author: str, record: dict[str, Any]) -> bool:
    """Whether the record's gesture verifies for ``author`` (whoever's key it is: that is the roster's question)."""
    from gitive.core import gesture  # PyNaCl: only where a decision is projected

    # db.TEAM_META, read here directly: index.db builds this module's table, so it cannot be imported back
    row = conn.execute("SELECT value FROM meta WHERE key = 'team_id'").fetchone()
    return row is None or gesture.key_of(row[0], author, record) is not None


def quarantined(conn: sqlite3.Connection, report: Report, author: str, log: str, seq: int) -> None:
    """``author``'s ``log`` is quarantined from ``seq`` (an equivocation): recount every gesture with a copy there."""
    sigs = conn.execute("SELECT DISTINCT gesture FROM decisions WHERE author = ? AND log = ? AND seq >= ? "
                        "AND gesture NOT LIKE 'unbound/%'", (author, log, seq)).fetchall()
    now = now_ms()
    for (sig,) in sigs:
        _recount(conn, report, sig, now)


def recount_quarantined(conn: sqlite3.Connection) -> None:
    """Recount every gesture with a copy at or past a quarantine (index step 0013: an index that counted such
    copies, or reported the copies after them as replays, before the rule below)."""
    for author, log, start in conn.execute("SELECT author, log, quarantined_from FROM logs "
                                           "WHERE quarantined_from IS NOT NULL").fetchall():
        quarantined(conn, Report(), author, log, start)


def _recount(conn: sqlite3.Connection, report: Report, sig: str, now: int) -> None:
    """Which copy of gesture ``sig`` counts, and which are replays.

    A copy at or past its log's quarantine (an equivocation) counts nowhere and competes with nothing: a rebuild
    holds such entries or not depending on which side of the fork it read first, and the incremental index
    holds whatever it saw, so only copies outside quarantines may decide the first appearance or be reported.
    """
    from gitive.store import refs  # pygit2: the read path's freshness check imports this module without it

    copies = []
    for author, log, seq, decided_at, hidden in conn.execute(
            "SELECT d.author, d.log, d.seq, d.decided_at, COALESCE(d.seq >= l.quarantined_from, 0) "
            "FROM decisions d LEFT JOIN logs l ON l.author = d.author AND l.log = d.log WHERE d.gesture = ? "
            "ORDER BY d.at, d.log, d.seq", (sig,)).fetchall():
        if not hidden:
            copies.append((author, log, seq, decided_at))
            continue
        commit = conn.execute("SELECT commit_id FROM entries WHERE author = ? AND log = ? AND seq = ?",
                              (author, log, seq)).fetchone()
        if commit:
            conn.execute("DELETE FROM problems WHERE kind = ? AND source = ? AND commit_id = ?",
                         (REPLAY_PROBLEM, refs.log_ref(author, log), commit[0]))
        conn.execute("UPDATE decisions SET counted = ? WHERE author = ? AND log = ? AND seq = ?",
                     (REPLAY, author, log, seq))
    for i, (author, log, seq, decided_at) in enumerate(copies):
        commit = conn.execute("SELECT commit_id FROM entries WHERE author = ? AND log = ? AND seq = ?",
                              (author, log, seq)).fetchone()
        source = refs.log_ref(author, log)
        if i == 0:
            stamp = decisions.Stamp(decided_at, 1) if decided_at is not None else None
            counted = COUNTS if decisions.due(stamp, now) else WAITING
            if commit:
                conn.execute("DELETE FROM problems WHERE kind = ? AND source = ? AND commit_id = ?",
                             (REPLAY_PROBLEM, source, commit[0]))
        else:
            counted = REPLAY
            first = copies[0]
            record_problem(conn, report, REPLAY_PROBLEM, source, commit[0] if commit else "", author, log, seq,
                           f"a copy of a decision already made at {first[1]} seq {first[2]}: the same gesture "
                           "appended again (by someone holding the machine key); it counts nowhere")
        conn.execute("UPDATE decisions SET counted = ? WHERE author = ? AND log = ? AND seq = ?",
                     (counted, author, log, seq))


def ripen(conn: sqlite3.Connection, now: int) -> set[str]:
    """Count the waiting decisions whose time has come; return their subjects."""
    rows = conn.execute("SELECT author, log, seq, subject FROM decisions WHERE counted = ? AND decided_at <= ?",
                        (WAITING, now + decisions.SKEW_MS)).fetchall()
    conn.executemany("UPDATE decisions SET counted = ? WHERE author = ? AND log = ? AND seq = ?",
                     [(COUNTS, a, log, seq) for a, log, seq, _ in rows])
    return {r[3] for r in rows}


def ripe(conn: sqlite3.Connection, now: int) -> bool:
    """Whether some waiting decision may count now (one indexed lookup: the hot read path asks this)."""
    return conn.execute("SELECT 1 FROM decisions WHERE counted = ? AND decided_at <= ? LIMIT 1",
                        (WAITING, now + decisions.SKEW_MS)).fetchone() is not None


def about(subject: str) -> str:
    """The record a review's or tombstone's subject names (a lesson or a task id)."""
    return subject.split("/", 1)[1] if "/" in subject else ""


def highest(conn: sqlite3.Connection, subject: str, person: str) -> int | None:
    """The highest sequence this index holds of ``person``'s decisions on ``subject`` (any copy, any state)."""
    row = conn.execute("SELECT MAX(d.n) FROM decisions d JOIN members m ON m.machine = d.author "
                       "WHERE d.subject = ? AND m.person = ?", (subject, person)).fetchone()
    return row[0] if row else None


def gestures_of(conn: sqlite3.Connection, places: list[tuple[str, str, int]]) -> set[str]:
    """The gesture signatures of the decisions at ``places`` ((author, log, seq)): what a reference spends."""
    out = set()
    for place in places:
        row = conn.execute("SELECT gesture FROM decisions WHERE author = ? AND log = ? AND seq = ?",
                           place).fetchone()
        if row:
            out.add(row[0])
    return out


def stamp_at(conn: sqlite3.Connection, author: str, log: str, seq: int) -> tuple[int | None, int | None]:
    """(n, signed time) of the decision at a place; (None, None) for a v1 or ungestured one."""
    row = conn.execute("SELECT n, decided_at FROM decisions WHERE author = ? AND log = ? AND seq = ?",
                       (author, log, seq)).fetchone()
    return (row[0], row[1]) if row else (None, None)
