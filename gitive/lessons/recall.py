"""Recall: the lessons that fit a free-text question and the files an agent is working on, best first.

Five signals make a lesson's score (hive overview part 3 §5): text relevance (FTS5 BM25 over text,
applicability and tags), overlap between the lesson's evidence files and the given files, scope (narrowest
first), an outcome rate ``(successes + 1) / (citations + 2)`` and age. Candidates come from two queries, the
top of the BM25 ranking and the lessons whose evidence shares a path, directory or file name with the given
files; everything else is scored in Python. Superseded, retracted and rejected lessons never appear; proposed
(and held) ones only when asked for, labelled.
"""

from __future__ import annotations

import json
import math
import re
import sqlite3
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from gitive.core.clock import now_ms
from gitive.lessons import evidence as evidence_mod
from gitive.lessons.catalog import HELD_AFTER_MS

if TYPE_CHECKING:
    import pygit2

DAY_MS = 86_400_000
POOL = 200  # candidates per source; pages within the first POOL results always come from the same pool
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
STOP_WORDS = frozenset(["a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "cannot", "could", "did", "do", "does", "doing", "done", "don", "down", "during", "each", "even", "ever", "every", "few", "for", "from", "further", "get", "gets", "getting", "got", "had", "has", "have", "having", "he", "her", "here", "hers", "him", "his", "how", "i", "if", "in", "into", "is", "isn", "it", "its", "itself", "just", "let", "lets", "like", "make", "me", "might", "more", "most", "much", "must", "my", "myself", "need", "needs", "no", "nor", "not", "now", "of", "off", "on", "once", "only", "or", "other", "ought", "our", "ours", "out", "over", "own", "per", "please", "same", "see", "seem", "seems", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "then", "there", "these", "they", "this", "those", "through", "to", "too", "try", "trying", "under", "until", "up", "us", "use", "used", "using", "very", "want", "was", "way", "we", "were", "what", "whats", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "within", "without", "would", "yet", "you", "your", "yours"])

# Abbreviations developers type for words lessons tend to spell out (prefix matching covers "config" ->
# "configuration" and "auth" -> "authentication"; these are not prefixes of their long form).
ABBREVIATIONS = {
    "db": "database", "dbs": "databases", "k8s": "kubernetes", "deps": "dependencies", "dep": "dependency",
    "js": "javascript", "ts": "typescript", "tz": "timezone", "msg": "message", "pw": "password",
    "pwd": "password", "creds": "credentials", "perf": "performance", "gh": "github", "ws": "websocket",
}

_WORD = re.compile(r"[^\W_]+")  # what FTS5's unicode61 tokenizer calls a token: letters and digits

_STATES = {False: ("verified",), True: ("verified", "proposed")}


class Candidate(NamedTuple):
    lesson: str
    bm25: float  # FTS5 bm25: negative, lower is better; 0.0 when the text did not match


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


def _text_candidates(conn: sqlite3.Connection, expression: str | None, states: tuple[str, ...],
                     pool: int, extra: Iterable[str]) -> dict[str, float]:
    """BM25 of the best ``pool`` text matches, and of any lesson in ``extra`` (file candidates) that matches."""
    if expression is None:
        return {}
    marks = ",".join(f"?{n}" for n in range(4, 4 + len(states)))
    rows = conn.execute(
        f"""WITH top AS (SELECT f.rowid FROM lesson_fts f JOIN lesson_status s ON s.lesson = f.lesson
                         WHERE lesson_fts MATCH ?1 AND s.state IN ({marks})
                         ORDER BY bm25(lesson_fts, {_weights()}) LIMIT ?2)
            SELECT lesson, bm25(lesson_fts, {_weights()}) FROM lesson_fts
            WHERE lesson_fts MATCH ?1 AND (rowid IN top OR lesson IN (SELECT value FROM json_each(?3)))""",
        (expression, pool, json.dumps(sorted(extra)), *states),
    ).fetchall()
    return {lesson: score for lesson, score in rows}


def _weights() -> str:
    return ", ".join(str(w) for w in BM25_WEIGHTS)


def _normal_path(path: str) -> str:
    return path.replace("\\", "/").strip().removeprefix("./")


def _file_patterns(files: Sequence[str]) -> list[str]:
    """Substrings of ``' ' + lessons.files + ' '`` that mean a path, directory or file name is shared."""
    patterns: list[str] = []
    for path in files:
        directory, _, name = path.rpartition("/")
        patterns.append(f" {path} ")
        if directory:
            patterns.append(f" {directory}/")
        patterns.append(f"/{name} ")
        patterns.append(f" {name} ")
    return list(dict.fromkeys(patterns))


def _file_candidates(conn: sqlite3.Connection, files: Sequence[str], states: tuple[str, ...],
                     pool: int) -> dict[str, str]:
    """Lessons whose evidence files share something with ``files``: id -> their files; exact matches first."""
    if not files:
        return {}
    patterns = _file_patterns(files)
    exact = [f" {path} " for path in files]
    any_sql = " OR ".join("instr(' ' || l.files || ' ', ?) > 0" for _ in patterns)
    exact_sql = " + ".join("(instr(' ' || l.files || ' ', ?) > 0)" for _ in exact)
    marks = ",".join("?" * len(states))
    rows = conn.execute(
        f"""SELECT l.id, l.files FROM lessons l JOIN lesson_status s ON s.lesson = l.id
            WHERE s.state IN ({marks}) AND l.files != '' AND ({any_sql})
            ORDER BY {exact_sql} DESC, l.at DESC, l.id LIMIT ?""",
        (*states, *patterns, *exact, pool),
    ).fetchall()
    return dict(rows)


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


_DETAILS = """
    SELECT l.id, l.kind, l.scope_kind, l.scope_value, l.files, l.evidence, l.tags, l.at, l.author,
           s.state, s.approver, m.person, COALESCE(st.citations, 0), COALESCE(st.successes, 0),
           b.text, b.applicability
    FROM visible_lessons l JOIN lesson_status s ON s.lesson = l.id JOIN members m ON m.machine = l.author
    LEFT JOIN lesson_stats st ON st.lesson = l.id LEFT JOIN lesson_bodies b ON b.body_hash = l.body_hash
    WHERE l.id IN (SELECT value FROM json_each(?))
"""

# The text shown is the edit made by the review that gave the lesson its state, if that review edited it.
_EDITS = """
    SELECT r.about, r.approver, b.text, b.applicability FROM valid_reviews r
    JOIN lesson_bodies b ON b.body_hash = r.edits
    WHERE r.approved = 1 AND r.about IN (SELECT value FROM json_each(?)) ORDER BY r.at, r.author, r.seq
"""


def _details(conn: sqlite3.Connection, ids: Iterable[str]) -> list[dict[str, Any]]:
    listed = json.dumps(sorted(ids))
    edits = {(about, approver): (text, applicability)
             for about, approver, text, applicability in conn.execute(_EDITS, (listed,))}
    out = []
    for (lesson, kind, scope_kind, scope_value, files, evidence, tags, at, machine, state, approver, person,
         citations, successes, text, applicability) in conn.execute(_DETAILS, (listed,)):
        text, applicability = edits.get((lesson, approver), (text, applicability))
        if text is None:
            continue  # the body has not arrived (or was dropped): nothing an agent could use
        out.append({
            "id": lesson, "kind": kind, "scope": scope_kind, "project": scope_value or None, "state": state,
            "origin": person, "author_machine": machine, "reviewer": approver, "at": at,
            "files": files.split() if files else [], "evidence": json.loads(evidence),
            "tags": json.loads(tags), "citations": citations, "successes": successes,
            "outcome_rate": (successes + 1) / (citations + 2), "text": text, "applicability": applicability,
        })
    return out


def _scope_key(item: dict[str, Any], project: str | None) -> str:
    if item["scope"] == "project" and project is not None and item["project"] != project:
        return "other-project"
    return str(item["scope"])


def _matched_words(words: Sequence[str], item: dict[str, Any]) -> list[str]:
    """Query words that visibly occur in the lesson (a rough echo of what FTS5 matched, for the reasons)."""
    haystack = set(_WORD.findall(" ".join([item["text"], item["applicability"] or "", *item["tags"]]).lower()))
    return [w for w in words if any(h.startswith(w[:max(PREFIX_MIN, len(w) - 2)]) or h == w for h in haystack)
            or ABBREVIATIONS.get(w, "\0") in haystack]


_SCOPE_REASON = {"personal": "personal lesson (narrowest scope)", "project": "this project's lesson",
                 "team": "team-wide lesson", "other-project": "from another project"}


def _score(item: dict[str, Any], bm25: float, best_bm25: float, words: Sequence[str],
           files: Sequence[str], project: str | None, now: int) -> None:
    """Fill in ``score`` and ``reasons`` (the signals that contributed, largest first)."""
    parts: list[tuple[float, str]] = []
    if bm25 < 0 and best_bm25 < 0:
        matched = _matched_words(words, item)
        parts.append((W_TEXT * bm25 / best_bm25, "text matches " + (", ".join(matched) or "the question")))
    overlap, why = file_overlap(item["files"], files)
    if overlap:
        parts.append((W_FILE * overlap, "; ".join(why)))
    scope = _scope_key(item, project)
    if W_SCOPE[scope]:
        parts.append((W_SCOPE[scope], _SCOPE_REASON[scope]))
    if item["citations"]:
        parts.append((W_OUTCOME * (item["outcome_rate"] - 0.5),
                      f"outcome: {item['successes']} of {item['citations']} citing sessions succeeded"))
    age_days = max(0, (now - item["at"]) // DAY_MS)  # whole days, so a ranking holds still within a day
    parts.append((W_AGE * math.pow(2, -age_days / AGE_HALF_LIFE_DAYS), f"{age_days} days old"))
    item["score"] = round(sum(p[0] for p in parts), 4)
    item["reasons"] = [p[1] for p in sorted(parts, key=lambda p: -abs(p[0])) if abs(p[0]) >= 0.005]
    item["age_days"] = round((now - item["at"]) / DAY_MS, 1)
    item["_rank"] = sum(p[0] for p in parts)


def _label(item: dict[str, Any], project: str | None, now: int) -> None:
    """Set ``state`` (proposed becomes held after 24 h), ``verified``, ``hypothesis`` and ``label``."""
    if item["state"] == "proposed" and now - item["at"] > HELD_AFTER_MS:
        item["state"] = "held"
    item["verified"] = item["state"] == "verified"
    item["hypothesis"] = _scope_key(item, project) == "other-project"
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
        author person), reviewer, at, age_days, score, reasons, text, applicability, tags, files, evidence,
        citations, successes, outcome_rate and stale.
    """
    if limit <= 0:
        return []
    offset = max(0, offset)
    now = now_ms()
    words = tokens(query)
    paths = list(dict.fromkeys(p for p in map(_normal_path, files) if p))[:MAX_FILES]
    states = _STATES[include_proposed]
    pool = POOL * math.ceil((offset + limit) / POOL)
    by_file = _file_candidates(conn, paths, states, pool)
    bm25 = _text_candidates(conn, match_expression(words), states, pool, by_file)
    if not bm25 and not by_file:
        return []
    best = min(bm25.values(), default=0.0)
    items = _details(conn, bm25.keys() | by_file.keys())
    for item in items:
        _score(item, bm25.get(item["id"], 0.0), best, words, paths, project, now)
    items.sort(key=lambda i: (-i["_rank"], i["id"]))
    page = items[offset:offset + limit]
    for item in page:
        del item["_rank"]
        _label(item, project, now)
        item["stale"] = _stale(repo, item)
    return page


def _stale(repo: pygit2.Repository | None, item: dict[str, Any]) -> list[str] | None:
    """Cited files changed since they were cited; None when there is no repository to check or the lesson
    was learned in another project (its paths name that project's files)."""
    if repo is None or item["hypothesis"]:
        return None
    return evidence_mod.stale(repo, item["evidence"])
