"""The files each lesson's evidence touches, as indexed tables: search and the hook look files up, never scan.

``paths`` interns every cited path once (with its directory, file name and how many lessons cite it);
``lesson_files`` maps a path to the lessons citing it by integer keys (the lesson's rowid in ``lessons``),
so a lesson costs a few bytes per file. A file comes from ``file:`` evidence, or from ``commit:`` evidence:
the files that commit changed, carried in the evidence item since proposals record them, or looked up in the
local repositories for lessons proposed before that. Lessons are only ever inserted, so rows only grow.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections import namedtuple
from collections.abc import Iterable, Sequence

# typing costs each hook process about 5 ms to import; with postponed annotations it is needed only by checkers
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NamedTuple

    from gitive.store.types import Repo

VIA_FILE, VIA_COMMIT = 1, 2
MAX_COMMIT_FILES = 64  # a commit touching more than this many files says little about any one of them
EXACT, SAME_DIR, SAME_NAME = 1.0, 0.4, 0.3


def split(path: str) -> tuple[str, str]:
    directory, _, name = path.rpartition("/")
    return directory, name


def cited(evidence: Any) -> dict[str, int]:
    """Path -> how it is cited (``VIA_FILE`` beats ``VIA_COMMIT``), from a lesson's evidence items."""
    out: dict[str, int] = {}
    for item in evidence if isinstance(evidence, list) else []:
        if not isinstance(item, dict):
            continue
        if item.get("kind") == "file" and isinstance(item.get("path"), str):
            out[item["path"]] = VIA_FILE
        elif item.get("kind") == "commit" and isinstance(item.get("files"), list):
            for path in item["files"][:MAX_COMMIT_FILES]:
                if isinstance(path, str) and path:
                    out.setdefault(path, VIA_COMMIT)
    return out


def add(conn: sqlite3.Connection, lesson: str, paths: dict[str, int], *, rowid: int | None = None) -> None:
    """Record that ``lesson`` cites ``paths`` (idempotent: a path already recorded for it is skipped).

    A lesson already indexed for search loses its search row first (its cited path words are part of what
    it indexed, and that row is deleted by what it indexed): the next refresh indexes it again. ``rowid``: the
    lesson's row was inserted just now with this rowid, so it cites nothing yet (one query fewer per lesson).
    """
    from gitive.index.lesson_text import drop_text  # not at the top: the hook imports this module

    if not paths:
        return
    if rowid is None:
        row = conn.execute("SELECT rowid FROM lessons WHERE id = ?", (lesson,)).fetchone()
        if row is None:
            return
        rowid = row[0]
        known = {p for (p,) in conn.execute("SELECT p.path FROM lesson_files f JOIN paths p ON p.id = f.path "
                                            "WHERE f.lesson = ?", (rowid,))}
    else:
        known = set()
    fresh = sorted((path, via) for path, via in paths.items() if path not in known)
    if fresh and conn.execute("SELECT 1 FROM lesson_text WHERE lesson = ?", (lesson,)).fetchone():
        drop_text(conn, lesson)
    for path, via in fresh:
        directory, name = split(path)
        (pid,) = conn.execute("INSERT INTO paths(path, dir, name, lessons) VALUES (?, ?, ?, 1) ON CONFLICT(path) "
                              "DO UPDATE SET lessons = lessons + 1 RETURNING id", (path, directory, name)).fetchone()
        conn.execute("INSERT INTO lesson_files(path, lesson, via) VALUES (?, ?, ?)", (pid, rowid, via))


def files_of(conn: sqlite3.Connection, lesson_rowids: Iterable[int]) -> dict[int, list[str]]:
    """The cited paths of each lesson (by rowid)."""
    out: dict[int, list[str]] = {}
    listed = json.dumps(sorted(set(lesson_rowids)))
    for lesson, path in conn.execute(
            "SELECT f.lesson, p.path FROM json_each(?) j CROSS JOIN lesson_files f ON f.lesson = j.value "
            "JOIN paths p ON p.id = f.path ORDER BY p.path", (listed,)):
        out.setdefault(lesson, []).append(path)
    return out


def resolve_commits(conn: sqlite3.Connection, stores: Sequence[Repo], lessons: set[str]) -> None:
    """Give lessons whose commit evidence predates recorded files the files those commits changed, where a
    local repository has the commit (a commit it lacks is looked up again when the lesson is next touched)."""
    from gitive.store.objects import changed_files

    if not lessons:
        return
    rows = conn.execute("SELECT id, evidence FROM lessons WHERE id IN (SELECT value FROM json_each(?))",
                        (json.dumps(sorted(lessons)),)).fetchall()
    for lesson, evidence in rows:
        for item in json.loads(evidence):
            if not isinstance(item, dict) or item.get("kind") != "commit" or "files" in item:
                continue
            for repo in stores:
                found = changed_files(repo, str(item.get("ref", "")))
                if found is not None:
                    add(conn, lesson, dict.fromkeys(found[:MAX_COMMIT_FILES], VIA_COMMIT))
                    break


if TYPE_CHECKING:
    class Match(NamedTuple):
        """One query file's match to a cited path: which query file, the path's id, how close, how common."""

        query: int
        path: int
        closeness: float
        lessons: int
else:  # the same tuple, without importing typing at run time
    Match = namedtuple("Match", "query path closeness lessons")


def matches(conn: sqlite3.Connection, files: Sequence[str], *, near: bool = True) -> list[Match]:
    """Cited paths equal to one of ``files`` (and, with ``near``, in the same directory or with the same file
    name), through the ``paths`` indexes: one indexed lookup per file and relation."""
    out: list[Match] = []
    for n, path in enumerate(files):
        directory, name = split(path)
        best: dict[int, tuple[float, int]] = {}
        clauses = [("path", path, EXACT)]
        if near:
            clauses += [("name", name, SAME_NAME)] + ([("dir", directory, SAME_DIR)] if directory else [])
        for column, value, closeness in clauses:
            for pid, count in conn.execute(f"SELECT id, lessons FROM paths WHERE {column} = ? LIMIT 256", (value,)):
                if closeness > best.get(pid, (0.0, 0))[0]:
                    best[pid] = (closeness, count)
        out += [Match(n, pid, closeness, count) for pid, (closeness, count) in best.items()]
    return out


def rarity(cited_by: int, total: int) -> float:
    """How much a match on a path cited by ``cited_by`` of ``total`` lessons tells (1 for a rare one).

    A file half the lessons cite is weak evidence that any one of them is the one that matters; one cited by
    a handful is strong. Smoothed so a moderately common file still counts for something.
    """
    if cited_by <= 1 or total <= 1:
        return 1.0
    return max(0.25, 1.0 - math.log(cited_by) / math.log(max(total, 2) * 4))


# Per lesson: the best closeness per query file (weighted by rarity), then the best one plus a quarter of the
# others, as ``recall_present.file_overlap`` adds them. Each matched path contributes only its citing lessons
# from rowid ``cut`` up (a range of the primary key), so a file cited by thousands of lessons costs what its
# newest few do (see ``weights``).
_SCORE = """
    WITH q AS (SELECT json_extract(value, '$[0]') AS qf, json_extract(value, '$[1]') AS pid,
                      json_extract(value, '$[2]') AS w, json_extract(value, '$[3]') AS cut FROM json_each(?1)),
    per AS (SELECT f.lesson AS lesson, q.qf AS qf, max(q.w) AS w FROM q CROSS JOIN lesson_files f
            ON f.path = q.pid AND f.lesson >= q.cut GROUP BY f.lesson, q.qf),
    scored AS (SELECT lesson, max(w) + 0.25 * (sum(w) - max(w)) AS s FROM per GROUP BY lesson)
    SELECT l.id, min(s, 1.5) FROM scored CROSS JOIN lessons l ON l.rowid = scored.lesson
    ORDER BY s DESC, l.at DESC LIMIT ?2
"""
# The same score for given lessons only (candidates from the text): each lesson's own cited paths, by its index.
_SCORE_OF = """
    WITH q AS (SELECT json_extract(value, '$[0]') AS qf, json_extract(value, '$[1]') AS pid,
                      json_extract(value, '$[2]') AS w FROM json_each(?1)),
    per AS (SELECT f.lesson AS lesson, q.qf AS qf, max(q.w) AS w
            FROM json_each(?2) j CROSS JOIN lessons l ON l.id = j.value CROSS JOIN lesson_files f ON f.lesson = l.rowid
            JOIN q ON q.pid = f.path GROUP BY f.lesson, q.qf),
    scored AS (SELECT lesson, max(w) + 0.25 * (sum(w) - max(w)) AS s FROM per GROUP BY lesson)
    SELECT l.id, min(s, 1.5) FROM scored CROSS JOIN lessons l ON l.rowid = scored.lesson
"""
# Lessons read per matched path: a file cited exactly gets many, the paths merely near one share a budget.
EXACT_READ, NEAR_READ, NEAR_READ_MIN = 400, 800, 8


def _cut(conn: sqlite3.Connection, match: Match, read: int) -> int:
    """The lowest lesson rowid among the ``read`` newest lessons citing ``match``'s path (0: all of them)."""
    if match.lessons <= read:
        return 0
    row = conn.execute("SELECT lesson FROM lesson_files WHERE path = ? ORDER BY lesson DESC LIMIT 1 OFFSET ?",
                       (match.path, read - 1)).fetchone()
    return int(row[0]) if row else 0


def weights(conn: sqlite3.Connection, files: Sequence[str], *, near: bool = True, rarer: bool = True) -> str:
    """The JSON list of (query file, path id, weight, lowest lesson rowid read) that scores lessons against
    ``files`` ("[]": none). ``near``: paths in the same directory or with the same name match too; ``rarer``:
    a path many lessons cite weighs less (else every match weighs its closeness).

    A path cited exactly contributes its ``EXACT_READ`` newest citing lessons; the paths merely near share
    ``NEAR_READ`` among them (at least ``NEAR_READ_MIN`` each), so scoring reads a bounded number of rows.
    """
    found = matches(conn, files, near=near) if files else []
    if not found:
        return "[]"
    total = conn.execute("SELECT max(rowid) FROM lessons").fetchone()[0] or 1
    share = max(NEAR_READ_MIN, NEAR_READ // max(1, sum(1 for m in found if m.closeness < EXACT)))
    return json.dumps([[m.query, m.path, m.closeness * (rarity(m.lessons, total) if rarer else 1.0),
                        _cut(conn, m, EXACT_READ if m.closeness >= EXACT else share)] for m in found])


def candidates(conn: sqlite3.Connection, weighted: str, limit: int) -> dict[str, float]:
    """The ``limit`` lessons whose evidence is nearest the files ``weighted`` was made for: id -> overlap.

    A bounded candidate set: of the lessons citing each matched path, only the newest ``EXACT_READ`` (exact
    match) or a share of ``NEAR_READ`` (same directory or name) are scored.
    """
    if weighted == "[]":
        return {}
    return dict(conn.execute(_SCORE, (weighted, limit)).fetchall())


def overlap_of(conn: sqlite3.Connection, weighted: str, lessons: Iterable[str]) -> dict[str, float]:
    """The overlap of just ``lessons`` (those not among the best candidates) with the same files."""
    listed = json.dumps(sorted(lessons))
    if weighted == "[]" or listed == "[]":
        return {}
    return dict(conn.execute(_SCORE_OF, (weighted, listed)).fetchall())
