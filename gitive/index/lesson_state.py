"""Lesson lifecycle in the index: who may retract, tombstones applied, and the materialized state of each lesson."""

from __future__ import annotations

import json
import sqlite3

from gitive.core import decisions
from gitive.index import projects, scrub
from gitive.index.lesson_text import drop_text


def may_retract(conn: sqlite3.Connection, tomb_author: str, lesson: str) -> bool | None:
    """May the machine ``tomb_author`` retract ``lesson``? None while the lesson is unknown here.

    Its author's person, a reviewer with authority, or an owner of the lesson's project may; an anchor
    machine never may.
    """
    row = conn.execute("SELECT author, scope_kind, scope_value FROM lessons WHERE id = ?", (lesson,)).fetchone()
    if row is None:
        return None
    found = conn.execute("SELECT person, role FROM members WHERE machine = ?", (tomb_author,)).fetchone()
    if found is None or found[1] == "anchor":
        return False
    person = found[0]
    author_person = conn.execute("SELECT person FROM members WHERE machine = ?", (row[0],)).fetchone()
    if author_person and author_person[0] == person:
        return True
    reviewers = {r[0] for r in conn.execute("SELECT approver FROM valid_reviews WHERE about = ?", (lesson,))}
    allowed = projects.confirmed(conn, row[2]) if row[1] == "project" else None
    if person in reviewers and (allowed is None or person in allowed):  # a reviewer with authority
        return True
    return row[1] == "project" and person in projects.owners(conn, row[2])


def _valid_tombstones(conn: sqlite3.Connection, everything: bool) -> set[tuple[str, str, int]]:
    """Tombstones that count (not yet applied ones unless ``everything``): admitted at their position, with a
    gesture by their author's person key (or below the migration point), by someone who may retract."""
    rows = conn.execute("SELECT author, log, seq, lesson FROM valid_tombstones"
                        + ("" if everything else " WHERE applied = 0")).fetchall()
    return {(a, log, seq) for a, log, seq, lesson in rows if may_retract(conn, a, lesson)}


def _bodies_of(conn: sqlite3.Connection, lesson: str, listed: str) -> set[str]:
    hashes = set(json.loads(listed))
    hashes |= {r[0] for r in conn.execute("SELECT body_hash FROM lessons WHERE id = ?", (lesson,))}
    hashes |= {r[0] for r in conn.execute("SELECT edits FROM reviews WHERE about = ? AND edits IS NOT NULL",
                                          (lesson,))}
    return hashes


def apply_tombstones(conn: sqlite3.Connection, recheck: bool = False) -> tuple[set[str], set[str]]:
    """Drop the bodies of retracted lessons from the index and refuse them from now on.

    With ``recheck`` (the roster changed), a tombstone applied earlier that no longer counts (its author was
    removed before it, by position) is lifted, so the index equals a rebuild; bodies come back only from a
    body store that still holds them. Returns (lessons retracted, lessons whose retraction was lifted).
    """
    valid = _valid_tombstones(conn, recheck)
    retracted, lifted = set(), set()
    for author, log, seq, lesson, listed, applied in conn.execute(
            "SELECT author, log, seq, lesson, bodies, applied FROM tombstones"
            + ("" if recheck else " WHERE applied = 0")).fetchall():
        counts = (author, log, seq) in valid
        if counts and not applied:
            drop_text(conn, lesson)  # first: its search row is deleted by what it indexed, the bodies below
            for h in _bodies_of(conn, lesson, listed):
                conn.execute("INSERT OR IGNORE INTO refused_bodies VALUES (?, ?)", (h, lesson))
                # only this lesson's copy: a tombstone may list any hash, never another lesson's body
                conn.execute("DELETE FROM lesson_bodies WHERE body_hash = ? AND lesson = ?", (h, lesson))
            conn.execute("UPDATE tombstones SET applied = 1 WHERE author = ? AND log = ? AND seq = ?",
                         (author, log, seq))
            retracted.add(lesson)
            scrub.mark(conn)
        elif applied and not counts and recheck:
            conn.execute("UPDATE tombstones SET applied = 0 WHERE author = ? AND log = ? AND seq = ?",
                         (author, log, seq))
            lifted.add(lesson)
    for lesson in lifted - retracted:
        if not conn.execute("SELECT 1 FROM tombstones WHERE lesson = ? AND applied = 1", (lesson,)).fetchone():
            conn.execute("DELETE FROM refused_bodies WHERE lesson = ?", (lesson,))
    return retracted, lifted - retracted


_REVIEWS = """
    SELECT r.approved, r.approver, r.at, d.n, d.decided_at, r.author, r.log, r.seq FROM valid_reviews r
    LEFT JOIN decisions d ON d.author = r.author AND d.log = r.log AND d.seq = r.seq WHERE r.about = ?
"""


def last_decisions(conn: sqlite3.Connection, about: str, allowed: set[str] | None = None
                   ) -> list[tuple[int, str, int]]:
    """Each person's last counted review of ``about`` as (approved, approver, when), the latest first.

    One person's reviews are ordered by their signed sequence (gitive/core/decisions.py), never by the time an
    entry claims; different people's last reviews by their signed times.
    """
    last: dict[str, tuple[tuple[int, int, int, str], tuple[int, str, int]]] = {}
    for approved, approver, at, n, decided_at, author, log, seq in conn.execute(_REVIEWS, (about,)):
        if allowed is not None and approver not in allowed:
            continue
        stamp = decisions.Stamp(decided_at, n) if n is not None else None
        key = decisions.order(stamp, at, f"{author}/{log}/{seq:020d}")
        if approver not in last or key > last[approver][0]:
            last[approver] = (key, (approved, approver, decisions.when(stamp, at)))
    return sorted((v[1] for v in last.values()), key=lambda r: (r[2], r[1]), reverse=True)


def _last_review(conn: sqlite3.Connection, lesson: str) -> tuple[int, str, int] | None:
    """The latest review with authority: for a project lesson, by a confirmed member of its project."""
    row = conn.execute("SELECT scope_kind, scope_value FROM lessons WHERE id = ?", (lesson,)).fetchone()
    allowed = projects.confirmed(conn, row[1]) if row and row[0] == "project" else None
    found = last_decisions(conn, lesson, allowed)
    return found[0] if found else None


def _status(conn: sqlite3.Connection, lesson: str) -> tuple[str, str | None, int | None, str | None] | None:
    if not conn.execute("SELECT 1 FROM visible_lessons WHERE id = ?", (lesson,)).fetchone():
        return None
    if conn.execute("SELECT 1 FROM tombstones WHERE lesson = ? AND applied = 1", (lesson,)).fetchone():
        return ("retracted", None, None, None)
    review = _last_review(conn, lesson)
    for (successor,) in conn.execute("SELECT id FROM visible_lessons WHERE supersedes = ?", (lesson,)).fetchall():
        later = _last_review(conn, successor)
        retracted = conn.execute("SELECT 1 FROM tombstones WHERE lesson = ? AND applied = 1", (successor,)).fetchone()
        if later and later[0] and not retracted:
            return ("superseded", review[1] if review else None, review[2] if review else None, successor)
    if review is None:
        return ("proposed", None, None, None)
    return ("verified" if review[0] else "rejected", review[1], review[2], None)


def recompute_status(conn: sqlite3.Connection, lessons: set[str] | None = None) -> None:
    """Refresh the materialized lifecycle state of ``lessons`` (all of them when None)."""
    if lessons is None:
        conn.execute("DELETE FROM lesson_status")
        lessons = {r[0] for r in conn.execute("SELECT id FROM lessons")}
    else:
        # A superseding lesson changes its predecessor's state too.
        lessons = lessons | {r[0] for r in conn.execute(
            f"SELECT supersedes FROM lessons WHERE supersedes IS NOT NULL AND id IN ({','.join('?' * len(lessons))})",
            tuple(lessons))}
    for lesson in lessons:
        status = _status(conn, lesson)
        if status is None:
            conn.execute("DELETE FROM lesson_status WHERE lesson = ?", (lesson,))
        else:
            conn.execute("INSERT INTO lesson_status VALUES (?,?,?,?,?) ON CONFLICT(lesson) DO UPDATE SET "
                         "state = excluded.state, approver = excluded.approver, "
                         "reviewed_at = excluded.reviewed_at, superseded_by = excluded.superseded_by",
                         (lesson, *status))


