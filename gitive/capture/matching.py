"""Which verified lessons to put in front of a session: the card at start, one lesson after a tool call.

Reads the index read-only with the standard library; ranking follows recall's signals in a cheap form: scope
(personal, this project, team; another project's lesson is a hypothesis), overlap of the lesson's cited files
with the files in play, text match with an error, and the outcome rate. Every candidate comes from an indexed
lookup: cited files through ``lesson_files``, error words through FTS5, the card's newest lessons per scope
through the ``lessons_scope_at`` and ``lessons_kind_at`` indexes; a lesson is only read once it is a candidate, however many the index holds.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import namedtuple
from pathlib import Path
from urllib.parse import quote

from gitive.index import lesson_files

# typing costs each hook process about 5 ms to import; with postponed annotations it is needed only by checkers
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NamedTuple

# What scoring needs of a candidate, for candidates listed by id in ?1 (JSON), verified ones only.
_COLUMNS = """
    SELECT l.id, l.scope_kind, l.scope_value, l.kind, l.rowid, s.approver, b.text, b.applicability, l.at,
           COALESCE(st.citations, 0), COALESCE(st.successes, 0)
    FROM json_each(?1) j CROSS JOIN lessons l ON l.id = j.value CROSS JOIN lesson_status s ON s.lesson = l.id
    JOIN lesson_text f ON f.lesson = l.id JOIN lesson_bodies b ON b.body_hash = f.body_hash
    LEFT JOIN lesson_stats st ON st.lesson = l.id
    WHERE s.state = 'verified'
"""
# The newest lessons of one scope (an index range, newest first); verified ones are kept by ``_COLUMNS``.
_NEWEST = "SELECT id FROM lessons WHERE scope_kind = ? AND scope_value = ? ORDER BY at DESC LIMIT ?"
_NEWEST_KIND = "SELECT id FROM lessons WHERE scope_kind = ? ORDER BY at DESC LIMIT ?"
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_STOP = {"the", "and", "for", "with", "that", "this", "from", "not", "are", "was", "error", "line", "file",
         "none", "true", "false", "self", "return", "import", "def", "class", "most", "recent", "call", "last",
         "traceback", "raise", "exception", "failed", "failure"}
CARD_POOL = 50  # newest lessons read per scope for the card


if TYPE_CHECKING:
    class Candidate(NamedTuple):
        id: str
        scope: str
        project: str
        kind: str
        files: list[str]
        reviewer: str | None
        text: str
        applicability: str
        at: int
        outcome: float
        score: float
        reasons: list[str]
else:  # the same tuple, without importing typing at run time
    Candidate = namedtuple("Candidate", "id scope project kind files reviewer text applicability at outcome score reasons")


def connect(path: Path, scratch: bool = False) -> sqlite3.Connection | None:
    """The index, read-only. ``scratch``: allow temp tables (recall reads word frequencies through them, as
    ``gitive lessons search`` does); the database itself stays read-only either way (``mode=ro``)."""
    if not path.exists():
        return None
    conn = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True, timeout=0.05)
    if not scratch:
        conn.execute("PRAGMA query_only = 1")
    return conn


def _overlap(lesson_files_: list[str], files: list[str]) -> tuple[float, list[str]]:
    score, reasons = 0.0, []
    for f in files:
        for lf in lesson_files_:
            if f == lf or f.endswith("/" + lf) or lf.endswith("/" + f):
                score += 3.0
                reasons.append(f"cites {lf}")
            elif lf.rsplit("/", 1)[0] == f.rsplit("/", 1)[0] and "/" in lf:
                score += 0.5
    return score, reasons[:3]


def _scope_weight(scope: str, value: str, project: str | None) -> tuple[float, str | None]:
    if scope == "personal":
        return 2.5, None
    if scope == "project":
        return (2.0, None) if project is None or value == project else (0.2, "hypothesis: from another project")
    return 1.0, None


def _rows(conn: sqlite3.Connection, ids: set[str]) -> list[tuple[Any, ...]]:
    """The candidates' rows with their cited files in place of the lesson's rowid."""
    rows = conn.execute(_COLUMNS, (json.dumps(sorted(ids)),)).fetchall()
    cited = lesson_files.files_of(conn, [row[4] for row in rows])
    return [(*row[:4], cited.get(row[4], []), *row[5:]) for row in rows]


def _score(row: tuple[Any, ...], files: list[str], project: str | None, text_hit: float) -> Candidate:
    lesson, scope, value, kind, lesson_files_, approver, text, applic, at, cites, wins = row
    overlap, reasons = _overlap(lesson_files_, files)
    weight, label = _scope_weight(scope, value, project)
    outcome = (wins + 1) / (cites + 2)
    score = overlap + text_hit + weight * 0.5 + outcome
    if text_hit:
        reasons.append("matches the error text")
    if label:
        reasons.append(label)
    return Candidate(lesson, scope, value, kind, lesson_files_, approver, text, applic, at, outcome, score, reasons)


def fts_query(text: str, limit: int = 12) -> str | None:
    """A safe FTS5 query: distinctive words of ``text`` quoted and ORed (no user syntax gets through)."""
    seen: list[str] = []
    for word in _WORD.findall(text):
        w = word.lower()
        if w not in _STOP and w not in seen:
            seen.append(w)
        if len(seen) >= limit:
            break
    return " OR ".join(f'"{w}"' for w in seen) or None


def _error_hits(conn: sqlite3.Connection, error: str | None) -> dict[str, float]:
    query = fts_query(error) if error else None
    if not query:
        return {}
    return {lesson: min(4.0, -rank) for lesson, rank in conn.execute(
        "WITH top AS (SELECT rowid AS id, bm25(lesson_fts) AS b FROM lesson_fts WHERE lesson_fts MATCH ? "
        "ORDER BY b LIMIT 20) SELECT t.lesson, top.b FROM top JOIN lesson_text t ON t.fts_rowid = top.id",
        (query,))}


def _exact_file_lessons(conn: sqlite3.Connection, files: list[str], limit: int) -> set[str]:
    """Lessons citing one of ``files`` exactly (a sibling file is not enough to interrupt a tool call)."""
    weighted = lesson_files.weights(conn, files, near=False, rarer=False)
    return set(lesson_files.candidates(conn, weighted, limit))


def for_files_or_error(conn: sqlite3.Connection, files: list[str], error: str | None, project: str | None,
                       exclude: set[str], limit: int = 1) -> list[Candidate]:
    """The best lessons for what a tool call just touched or the error it hit."""
    names = [f for f in files if f][:8]
    by_file = _exact_file_lessons(conn, names, 200) if names else set()
    hits = _error_hits(conn, error)
    found = [_score(row, files, project, hits.get(row[0], 0.0)) for row in _rows(conn, by_file | set(hits))
             if row[0] not in exclude]
    # Inject only on a real match: a cited file touched, or the error's words. A sibling file is not enough.
    found = [c for c in found if hits.get(c.id) or _overlap(c.files, files)[0] >= 3.0]
    return sorted(found, key=lambda c: -c.score)[:limit]


def for_card(conn: sqlite3.Connection, files: list[str], project: str | None, limit: int = 5) -> list[Candidate]:
    """The verified lessons most relevant to this repository and the files in play."""
    ids = {r[0] for r in conn.execute(_NEWEST_KIND, ("personal", CARD_POOL))}
    if project is None:
        ids |= {r[0] for r in conn.execute(_NEWEST_KIND, ("project", CARD_POOL))}
    else:
        ids |= {r[0] for r in conn.execute(_NEWEST, ("project", project, CARD_POOL))}
    ids |= {r[0] for r in conn.execute(_NEWEST, ("team", "", CARD_POOL))}
    paths = [f for f in files if f][:32]
    if paths:
        ids |= set(lesson_files.candidates(conn, lesson_files.weights(conn, paths), CARD_POOL))
    found = [_score(row, files, project, 0.0) for row in _rows(conn, ids)]
    found = [c for c in found if c.scope != "project" or project is None or c.project == project or c.score > 3]
    return sorted(found, key=lambda c: (-c.score, -c.at))[:limit]
