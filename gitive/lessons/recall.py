"""Recall: the lessons that fit a free-text question and the files an agent is working on, best first.

Five signals make a lesson's score (hive overview part 3 §5): text relevance (FTS5 BM25 over text,
applicability and tags, relative to the best match), overlap between the lesson's evidence files and the given
files, scope (narrowest first), an outcome rate ``(successes + 1) / (citations + 2)`` and age. Candidates
come from one FTS5 statement (the best BM25 matches, plus the file candidates that match at all) and from
an in-memory index of evidence paths (by path, directory and file name) that one query per search tops up
with the lessons added since; one more query reads what scoring needs of the candidates, and everything is
scored in Python. Only the returned page is read in full. Superseded, retracted and rejected lessons never appear; proposed (and held) ones only when
asked for, labelled.
"""

from __future__ import annotations

import json
import math
import os
import re
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from gitive.core.clock import now_ms
from gitive.lessons import evidence as evidence_mod
from gitive.lessons.catalog import HELD_AFTER_MS

if TYPE_CHECKING:
    import pygit2

DAY_MS = 86_400_000
POOL = 50  # candidates per source; pages within the first POOL results always come from the same pool
MAX_TOKENS = 32
MAX_FILES = 32
PREFIX_MIN = 4  # shorter words match exactly: "db"* would match every word starting with db

# Weights. Text and exact file overlap carry the ranking; scope, outcome and age order otherwise close
# results (a verified team lesson with a strong match still beats a personal one with a weak match).
W_TEXT = 1.0
W_FILE = 0.8
FILE_EXACT, FILE_DIR, FILE_NAME = 1.0, 0.4, 0.3
W_SCOPE = {"personal": 0.15, "project": 0.10, "team": 0.05, "other-project": 0.0}
W_OUTCOME = 0.3  # times (rate - 1/2): a lesson nobody has cited yet neither gains nor loses
W_AGE = 0.05  # times 2^(-age / AGE_HALF_LIFE_DAYS): newer slightly preferred
AGE_HALF_LIFE_DAYS = 90
BM25_WEIGHTS = (0.0, 1.0, 1.0, 0.5)  # lesson (unindexed), text, applicability, tags

LABEL_PROPOSED = "proposed — not reviewed"
LABEL_HELD = "held — not reviewed, no answer in 24 h"
LABEL_HYPOTHESIS = "hypothesis — learned in another project"

# Words that carry no topic in a question an agent types; dropping them keeps BM25 on the words that matter.
STOP_WORDS = frozenset((
    "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are", "as",
    "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can",
    "cannot", "could", "did", "do", "does", "doing", "don", "done", "down", "during", "each", "even", "ever",
    "every", "few", "for", "from", "further", "get", "gets", "getting", "got", "had", "has", "have",
    "having", "he", "her", "here", "hers", "him", "his", "how", "i", "if", "in", "into", "is", "isn", "it",
    "its", "itself", "just", "let", "lets", "like", "make", "me", "might", "more", "most", "much", "must",
    "my", "myself", "need", "needs", "no", "nor", "not", "now", "of", "off", "on", "once", "one", "ones",
    "only", "or", "other", "ought", "our", "ours", "out", "over", "own", "per", "please", "same", "see",
    "seem", "seems", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them",
    "then", "there", "these", "they", "this", "those", "through", "to", "too", "try", "trying", "under",
    "until", "up", "us", "use", "used", "using", "very", "want", "was", "way", "we", "were", "what", "whats",
    "when", "where", "which", "while", "who", "whom", "why", "will", "with", "within", "without", "would",
    "yet", "you", "your", "yours",
))

# Abbreviations developers type for words lessons tend to spell out (prefix matching covers "config" ->
# "configuration" and "auth" -> "authentication"; these are not prefixes of their long form).
ABBREVIATIONS = {
    "db": "database", "dbs": "databases", "k8s": "kubernetes", "deps": "dependencies", "dep": "dependency",
    "js": "javascript", "ts": "typescript", "tz": "timezone", "msg": "message", "pw": "password",
    "pwd": "password", "creds": "credentials", "perf": "performance", "gh": "github", "ws": "websocket",
}

_WORD = re.compile(r"[^\W_]+")  # what FTS5's unicode61 tokenizer calls a token: letters and digits

_STATES = {False: ("verified",), True: ("verified", "proposed")}


def tokens(query: str) -> list[str]:
    """The words of ``query`` worth searching for: lower-cased, stop words dropped, each once, in order."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(query.lower()):
        if len(word) > 1 and word not in STOP_WORDS:
            seen.setdefault(word[:64], None)
    return list(seen)[:MAX_TOKENS]


def match_expression(words: Sequence[str]) -> str | None:
    """A safe FTS5 MATCH expression ORing ``words`` (None if there are none).

    Each word becomes a quoted string (a double quote inside is doubled), so user text can never be read as
    FTS5 syntax (``NEAR``, ``AND``, ``*``, ``-``, ``:``, parentheses); words of ``PREFIX_MIN`` or more
    characters also match as prefixes, and a known abbreviation also matches its long form.
    """
    terms = []
    for word in words:
        for form in (word, ABBREVIATIONS.get(word)):
            if form:
                quoted = '"' + form.replace('"', '""') + '"'
                terms.append(quoted + "*" if len(form) >= PREFIX_MIN else quoted)
    return " OR ".join(dict.fromkeys(terms)) or None


def _text_candidates(conn: sqlite3.Connection, expression: str | None, pool: int,
                     extra: Iterable[str]) -> dict[str, float]:
    """BM25 of the best ``pool`` text matches, and of the lessons in ``extra`` (file candidates) that match.

    One statement. FTS5 scores every match (once, materialized when ``extra`` needs a second look), then the
    lesson ids are read by rowid from the FTS5 content table (``lesson_fts_content``, column ``c0``: the
    shadow table SQLite documents for a table with content) for the best ``pool`` and for the matches among
    ``extra``. Reading the UNINDEXED column through the virtual table costs a statement step per match.
    """
    if expression is None:
        return {}
    listed = json.dumps(sorted(extra))
    if listed == "[]":
        sql = f"""WITH top AS (SELECT rowid AS id, bm25(lesson_fts, {_weights()}) AS b FROM lesson_fts
                               WHERE lesson_fts MATCH ?1 ORDER BY b LIMIT ?2)
                  SELECT c.c0, top.b FROM top JOIN lesson_fts_content c ON c.id = top.id"""
        return dict(conn.execute(sql, (expression, pool)).fetchall())
    sql = f"""WITH m AS MATERIALIZED (SELECT rowid AS id, bm25(lesson_fts, {_weights()}) AS b FROM lesson_fts
                                      WHERE lesson_fts MATCH ?1),
                   top AS (SELECT id, b FROM m ORDER BY b LIMIT ?2)
              SELECT c.c0, top.b FROM top JOIN lesson_fts_content c ON c.id = top.id
              UNION
              SELECT c.c0, m.b FROM m JOIN lesson_fts_content c ON c.id = m.id
              WHERE c.c0 IN (SELECT value FROM json_each(?3))"""
    return dict(conn.execute(sql, (expression, pool, listed)).fetchall())


def _weights() -> str:
    return ", ".join(str(w) for w in BM25_WEIGHTS)


def _normal_path(path: str) -> str:
    return path.replace("\\", "/").strip().removeprefix("./")


class _Paths:
    """The evidence paths of one index file's lessons, by path, directory and file name, held in memory.

    Lesson rows are only ever inserted (``INSERT OR IGNORE`` in ``gitive.index.lessons.project_entry``; a
    rebuild writes a new file), so reading the rows past the highest rowid seen keeps this exact. Scanning
    ``lessons`` for every search would cost more than the rest of the search at 10,000 lessons; an index
    table of evidence paths in the schema would make this unnecessary.
    """

    def __init__(self) -> None:
        self._clear()

    def _clear(self) -> None:
        self.high = 0
        self.cited: dict[str, tuple[str, int]] = {}  # lesson -> (its files, at)
        self.by_key: dict[tuple[str, str], set[str]] = {}  # ("path" | "dir" | "name", value) -> lessons

    def top_up(self, conn: sqlite3.Connection) -> None:
        """Read the lessons added since the last call (one query; none when nothing is new)."""
        high = conn.execute("SELECT max(rowid) FROM lessons").fetchone()[0] or 0
        if high < self.high:  # not the file this was read from: start again
            self._clear()
        for lesson, files, at in conn.execute(
                "SELECT id, files, at FROM lessons WHERE rowid > ? AND rowid <= ? AND files != ''",
                (self.high, high)):
            self.cited[lesson] = (files, at)
            for path in files.split():
                directory, _, name = path.rpartition("/")
                for key in (("path", path), ("dir", directory), ("name", name)):
                    self.by_key.setdefault(key, set()).add(lesson)
        self.high = high

    def near(self, files: Sequence[str]) -> dict[str, tuple[str, int]]:
        """Lessons citing one of ``files``, a file in the same directory, or one with the same name."""
        found: set[str] = set()
        for path in files:
            directory, _, name = path.rpartition("/")
            found |= self.by_key.get(("path", path), set()) | self.by_key.get(("name", name), set())
            if directory:
                found |= self.by_key.get(("dir", directory), set())
        return {lesson: self.cited[lesson] for lesson in found}


_PATHS: dict[tuple[str, int, int], _Paths] = {}
_PATHS_LOCK = threading.Lock()
_PATHS_KEPT = 8  # index files remembered per process


def _paths(conn: sqlite3.Connection) -> _Paths:
    """The path index of ``conn``'s database, topped up (call with ``_PATHS_LOCK`` held).

    An index file is known by its path, inode and the time its first migration ran, so a rebuilt index is a
    new one even if the file system hands out the same inode again.
    """
    path = next((row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"), "")
    born = conn.execute("SELECT min(at) FROM migrations").fetchone()[0] if path else None
    if not path or born is None:
        fresh = _Paths()  # an in-memory or unmigrated database: nothing to remember it by
        fresh.top_up(conn)
        return fresh
    key = (path, os.stat(path).st_ino, born)
    if key not in _PATHS and len(_PATHS) >= _PATHS_KEPT:
        del _PATHS[next(iter(_PATHS))]
    paths = _PATHS.setdefault(key, _Paths())
    paths.top_up(conn)
    return paths


def _file_candidates(conn: sqlite3.Connection, files: Sequence[str], pool: int) -> dict[str, float]:
    """Lessons whose evidence shares a path, directory or file name with ``files``: id -> overlap, the
    ``pool`` best (then the newest)."""
    if not files:
        return {}
    with _PATHS_LOCK:
        near = _paths(conn).near(files)
    scored = {lesson: file_overlap(cited.split(), files)[0] for lesson, (cited, _) in near.items()}
    best = sorted((lesson for lesson, score in scored.items() if score),
                  key=lambda lesson: (-scored[lesson], -near[lesson][1], lesson))
    return {lesson: scored[lesson] for lesson in best[:pool]}


def file_overlap(lesson_files: Sequence[str], files: Sequence[str]) -> tuple[float, list[str]]:
    """How much a lesson's evidence files overlap ``files`` (0 to 1.5), and why, said plainly.

    A cited path that is one of ``files`` counts most, one in the same directory or with the same file name
    less. The best match counts fully and every further matched file adds a quarter of its own weight.
    """
    found: list[tuple[float, str]] = []
    for path in files:
        directory, _, name = path.rpartition("/")
        best: tuple[float, str] = (0.0, "")
        for cited in lesson_files:
            cited_dir, _, cited_name = cited.rpartition("/")
            if cited == path:
                match = (FILE_EXACT, f"cites {path}")
            elif cited_dir == directory and directory:
                match = (FILE_DIR, f"cites {cited}, in the same directory as {path}")
            elif cited_name == name:
                match = (FILE_NAME, f"cites {cited}, same file name as {path}")
            else:
                continue
            best = max(best, match, key=lambda m: m[0])
        if best[0]:
            found.append(best)
    if not found:
        return 0.0, []
    found.sort(key=lambda m: -m[0])
    score = found[0][0] + 0.25 * sum(m[0] for m in found[1:])
    return min(score, 1.5), [m[1] for m in found[:3]]


class _Row(NamedTuple):
    """What scoring needs of a candidate (the rest is read for the returned page only)."""

    lesson: str
    scope: str
    project: str
    files: str
    at: int
    citations: int
    successes: int


# Eligible candidates: visible, in an allowed state, with a text to show (their own or a reviewer's edit).
# CROSS JOIN keeps the plan on the candidate list (a state IN list would otherwise tempt the planner to walk
# every lesson of that state).
_ROWS = """
    SELECT l.id, l.scope_kind, l.scope_value, l.files, l.at, COALESCE(st.citations, 0), COALESCE(st.successes, 0)
    FROM json_each(?1) j CROSS JOIN visible_lessons l ON l.id = j.value CROSS JOIN lesson_status s ON s.lesson = l.id
    LEFT JOIN lesson_stats st ON st.lesson = l.id
    WHERE s.state IN (SELECT value FROM json_each(?2))
      AND (EXISTS (SELECT 1 FROM lesson_bodies b WHERE b.body_hash = l.body_hash)
           OR EXISTS (SELECT 1 FROM valid_reviews r JOIN lesson_bodies e ON e.body_hash = r.edits
                      WHERE r.about = l.id AND r.approved = 1 AND r.approver = s.approver))
"""

_DETAILS = """
    SELECT l.id, l.kind, l.evidence, l.tags, l.author, s.state, s.approver, m.person, b.text, b.applicability
    FROM lessons l JOIN lesson_status s ON s.lesson = l.id JOIN members m ON m.machine = l.author
    LEFT JOIN lesson_bodies b ON b.body_hash = l.body_hash
    WHERE l.id IN (SELECT value FROM json_each(?))
"""

# The text shown is the edit made by the review that gave the lesson its state, if that review edited it.
_EDITS = """
    SELECT r.about, r.approver, b.text, b.applicability FROM valid_reviews r
    JOIN lesson_bodies b ON b.body_hash = r.edits
    WHERE r.approved = 1 AND r.about IN (SELECT value FROM json_each(?)) ORDER BY r.at, r.author, r.seq
"""


def _rows(conn: sqlite3.Connection, ids: Iterable[str], states: tuple[str, ...]) -> list[_Row]:
    return [_Row(*row) for row in conn.execute(_ROWS, (json.dumps(sorted(ids)), json.dumps(states)))]


def _scope_key(row: _Row, project: str | None) -> str:
    if row.scope == "project" and project is not None and row.project != project:
        return "other-project"
    return row.scope


def _signals(row: _Row, bm25: float, best_bm25: float, files: Sequence[str], project: str | None,
             now: int) -> list[tuple[float, str]]:
    """Each signal's contribution to the score and why, said plainly ("text" is spelled out later)."""
    parts: list[tuple[float, str]] = []
    if bm25 < 0 and best_bm25 < 0:
        parts.append((W_TEXT * bm25 / best_bm25, "text"))
    if files and row.files:
        overlap, why = file_overlap(row.files.split(), files)
        if overlap:
            parts.append((W_FILE * overlap, "; ".join(why)))
    scope = _scope_key(row, project)
    if W_SCOPE[scope]:
        parts.append((W_SCOPE[scope], _SCOPE_REASON[scope]))
    if row.citations:
        rate = (row.successes + 1) / (row.citations + 2)
        parts.append((W_OUTCOME * (rate - 0.5),
                      f"outcome: {row.successes} of {row.citations} citing sessions succeeded"))
    age_days = max(0, (now - row.at) // DAY_MS)  # whole days, so a ranking holds still within a day
    parts.append((W_AGE * math.pow(2, -age_days / AGE_HALF_LIFE_DAYS), f"{age_days} days old"))
    return parts


_SCOPE_REASON = {"personal": "personal lesson (narrowest scope)", "project": "this project's lesson",
                 "team": "team-wide lesson", "other-project": "from another project"}


def _matched_words(words: Sequence[str], text: str, applicability: str, tags: Sequence[str]) -> list[str]:
    """Query words that visibly occur in the lesson (a rough echo of what FTS5 matched, for the reasons)."""
    haystack = " " + " ".join(_WORD.findall(" ".join([text, applicability, *tags]).lower()))
    return [w for w in words if " " + w[:max(PREFIX_MIN, len(w) - 4)] in haystack
            or " " + ABBREVIATIONS.get(w, "\0") in haystack]


def _present(conn: sqlite3.Connection, ranked: list[tuple[float, _Row, list[tuple[float, str]]]],
             words: Sequence[str], project: str | None, now: int,
             repo: pygit2.Repository | None) -> list[dict[str, Any]]:
    """The result dicts of one page: provenance, text, labels, reasons and stale evidence."""
    listed = json.dumps([row.lesson for _, row, _ in ranked])
    edits = {(about, approver): (text, applicability)
             for about, approver, text, applicability in conn.execute(_EDITS, (listed,))}
    details = {d[0]: d for d in conn.execute(_DETAILS, (listed,))}
    out = []
    for score, row, parts in ranked:
        _, kind, evidence, tags, machine, state, approver, person, text, applicability = details[row.lesson]
        text, applicability = edits.get((row.lesson, approver), (text, applicability))
        item: dict[str, Any] = {
            "id": row.lesson, "kind": kind, "scope": row.scope, "project": row.project or None,
            "state": state, "origin": person, "author": person, "author_machine": machine, "reviewer": approver, "at": row.at,
            "age_days": round((now - row.at) / DAY_MS, 1), "score": round(score, 4), "text": text,
            "applicability": applicability or "", "tags": json.loads(tags), "files": row.files.split(),
            "evidence": json.loads(evidence), "citations": row.citations, "successes": row.successes,
            "outcome_rate": (row.successes + 1) / (row.citations + 2),
        }
        matched = ", ".join(_matched_words(words, text, applicability or "", item["tags"]))
        item["reasons"] = [("text matches " + (matched or "the question")) if why == "text" else why
                           for value, why in sorted(parts, key=lambda p: -abs(p[0])) if abs(value) >= 0.005]
        _label(item, _scope_key(row, project) == "other-project", now)
        item["stale"] = None if repo is None or item["hypothesis"] else evidence_mod.stale(repo, item["evidence"])
        out.append(item)
    return out


def _label(item: dict[str, Any], hypothesis: bool, now: int) -> None:
    """Set ``state`` (proposed becomes held after 24 h), ``verified``, ``hypothesis`` and ``label``."""
    if item["state"] == "proposed" and now - item["at"] > HELD_AFTER_MS:
        item["state"] = "held"
    item["verified"] = item["state"] == "verified"
    item["hypothesis"] = hypothesis
    labels = {"proposed": [LABEL_PROPOSED], "held": [LABEL_HELD]}.get(item["state"], [])
    if item["hypothesis"]:
        labels.append(LABEL_HYPOTHESIS)
    item["label"] = "; ".join(labels) or None


def search(conn: sqlite3.Connection, query: str, *, files: Sequence[str] = (), project: str | None = None,
           include_proposed: bool = False, limit: int = 10, offset: int = 0,
           repo: pygit2.Repository | None = None) -> list[dict[str, Any]]:
    """Lessons for ``query`` and ``files``, best first.

    Args:
        conn: an up-to-date index (see ``gitive.index.refresh.fresh_index``).
        query: free text as an agent would type it; never read as FTS5 syntax. May be empty when ``files``
            is not: the lessons whose evidence touches those files are returned.
        files: paths (relative to the repository root) the agent is working on.
        project: the current project id; project lessons of other projects are labelled hypotheses and rank
            below this project's. None: no project is current, none is labelled.
        include_proposed: also return proposed (and held) lessons, labelled as not reviewed.
        limit, offset: the page. Pages within the first ``POOL`` results are consistent with each other.
        repo: the project repository; when given, each result's ``stale`` lists cited files whose blob at
            HEAD differs from the one cited (None when not checked).

    Returns:
        One dict per lesson: id, kind, scope, project, state, verified, label, hypothesis, origin (the
        author person; also as ``author``, the name ``catalog`` uses), author_machine, reviewer, at, age_days,
        score, reasons, text, applicability, tags, files, evidence, citations, successes, outcome_rate and
        stale.
    """
    if limit <= 0:
        return []
    offset = max(0, offset)
    if isinstance(files, str):
        files = [files]
    now = now_ms()
    words = tokens(query)
    paths = list(dict.fromkeys(p for p in map(_normal_path, files) if p))[:MAX_FILES]
    states = _STATES[include_proposed]
    pool = POOL * math.ceil((offset + limit) / POOL)
    by_file = _file_candidates(conn, paths, pool)
    bm25 = _text_candidates(conn, match_expression(words), pool, by_file)
    if not bm25 and not by_file:
        return []
    rows = _rows(conn, bm25.keys() | by_file.keys(), states)
    best = min((bm25.get(row.lesson, 0.0) for row in rows), default=0.0)  # text scores are relative to it
    ranked = []
    for row in rows:
        parts = _signals(row, bm25.get(row.lesson, 0.0), best, paths, project, now)
        ranked.append((sum(p[0] for p in parts), row, parts))
    ranked.sort(key=lambda r: (-r[0], r[1].lesson))
    return _present(conn, ranked[offset:offset + limit], words, project, now, repo)
