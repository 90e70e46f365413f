"""Which verified lessons to put in front of a session: the card at start, one lesson after a tool call.

Reads the index read-only with the standard library; ranking follows recall's signals in a cheap form: scope
(personal, this project, team; another project's lesson is a hypothesis), overlap of the lesson's evidence files
with the files in play, text match with an error, and the outcome rate.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import quote

_COLUMNS = """
    SELECT l.id, l.scope_kind, l.scope_value, l.kind, l.files, s.approver, f.text, f.applicability, l.at,
           COALESCE(st.citations, 0), COALESCE(st.successes, 0)
    FROM lesson_status s JOIN lessons l ON l.id = s.lesson JOIN lesson_text f ON f.lesson = l.id
    LEFT JOIN lesson_stats st ON st.lesson = l.id
    WHERE s.state = 'verified'
"""
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")
_STOP = {"the", "and", "for", "with", "that", "this", "from", "not", "are", "was", "error", "line", "file",
         "none", "true", "false", "self", "return", "import", "def", "class", "most", "recent", "call", "last",
         "traceback", "raise", "exception", "failed", "failure"}


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


def connect(path: Path) -> sqlite3.Connection | None:
    if not path.exists():
        return None
    conn = sqlite3.connect(f"file:{quote(str(path))}?mode=ro", uri=True, timeout=0.05)
    conn.execute("PRAGMA query_only = 1")
    return conn


def _overlap(lesson_files: list[str], files: list[str]) -> tuple[float, list[str]]:
    score, reasons = 0.0, []
    for f in files:
        for lf in lesson_files:
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


def _score(row: tuple[Any, ...], files: list[str], project: str | None, text_hit: float) -> Candidate:
    lesson, scope, value, kind, files_s, approver, text, applic, at, cites, wins = row
    lesson_files = files_s.split() if files_s else []
    overlap, reasons = _overlap(lesson_files, files)
    weight, label = _scope_weight(scope, value, project)
    outcome = (wins + 1) / (cites + 2)
    score = overlap + text_hit + weight * 0.5 + outcome
    if text_hit:
        reasons.append("matches the error text")
    if label:
        reasons.append(label)
    return Candidate(lesson, scope, value, kind, lesson_files, approver, text, applic, at, outcome, score, reasons)


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


def for_files_or_error(conn: sqlite3.Connection, files: list[str], error: str | None, project: str | None,
                       exclude: set[str], limit: int = 1) -> list[Candidate]:
    """The best lessons for what a tool call just touched or the error it hit."""
    hits: dict[str, float] = {}
    rows: dict[str, tuple[Any, ...]] = {}
    names = [f for f in files if f][:8]
    if names:
        clause = " OR ".join("l.files LIKE ?" for _ in names)
        args = [f"%{Path(f).name}%" for f in names]
        for row in conn.execute(f"{_COLUMNS} AND ({clause}) LIMIT 200", args):
            rows[row[0]] = row
    query = fts_query(error) if error else None
    if query:
        for lesson, rank in conn.execute(
                "WITH top AS (SELECT rowid AS id, bm25(lesson_fts) AS b FROM lesson_fts WHERE lesson_fts MATCH ? "
                "ORDER BY b LIMIT 20) SELECT t.lesson, top.b FROM top JOIN lesson_text t ON t.fts_rowid = top.id",
                (query,)):
            hits[lesson] = min(4.0, -rank)
        missing = [h for h in hits if h not in rows]
        if missing:
            marks = ",".join("?" * len(missing))
            for row in conn.execute(f"{_COLUMNS} AND l.id IN ({marks})", missing):
                rows[row[0]] = row
    found = [_score(row, files, project, hits.get(lesson, 0.0)) for lesson, row in rows.items()
             if lesson not in exclude]
    # Inject only on a real match: a cited file touched, or the error's words. A sibling file is not enough.
    found = [c for c in found if hits.get(c.id) or _overlap(c.files, files)[0] >= 3.0]
    return sorted(found, key=lambda c: -c.score)[:limit]


def for_card(conn: sqlite3.Connection, files: list[str], project: str | None, limit: int = 5) -> list[Candidate]:
    """The verified lessons most relevant to this repository and the files in play."""
    rows = conn.execute(
        f"{_COLUMNS} ORDER BY (l.scope_kind = 'personal') + (l.scope_kind = 'project' AND l.scope_value = ?) DESC, "
        "l.at DESC LIMIT 300", (project or "",)).fetchall()
    found = [_score(row, files, project, 0.0) for row in rows]
    found = [c for c in found if c.scope != "project" or project is None or c.project == project or c.score > 3]
    return sorted(found, key=lambda c: (-c.score, -c.at))[:limit]
