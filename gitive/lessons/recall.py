"""Recall: the lessons that fit a free-text question and the files an agent is working on, best first.

Five signals make a lesson's score (hive overview part 3 §5): text relevance, overlap between the files a
lesson's evidence touches and the given files, scope (narrowest first), an outcome rate
``(successes + 1) / (citations + 2)`` and age. Text relevance is FTS5 BM25 over the lesson's text,
applicability, tags, symptoms and cited path words (applicability counts more for a question worded as a
task); with rephrasings, or with the optional dense backend (``lessons.semantic``), each phrasing and each
backend ranks on its own and the rankings are fused by reciprocal rank fusion; the lexical first keeps the
first place unless meaning finds it unrelated (``_keep_lexical_first``). Candidates come from indexed
lookups only: the best BM25 matches (one FTS5 statement per phrasing) and the lessons whose cited files are
nearest (``index.lesson_files``, where a file many lessons cite counts for less). Only the returned page is
read in full. Superseded, retracted and rejected lessons never appear; proposed (and held) ones only when asked
for, labelled.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from gitive.core.clock import now_ms
from gitive.index import admitted, lesson_files, lesson_terms, words
from gitive.lessons import recall_context
from gitive.lessons.recall_context import SessionContext
from gitive.lessons.recall_present import (
    FILE_DIR,
    FILE_EXACT,
    FILE_NAME,
    LABEL_HELD,
    LABEL_HYPOTHESIS,
    LABEL_PROPOSED,
    file_overlap,
    present,
)

if TYPE_CHECKING:
    from gitive.lessons.semantic import Backend
    from gitive.store.types import Repo

__all__ = ["AUTO", "FILE_DIR", "FILE_EXACT", "FILE_NAME", "LABEL_HELD", "LABEL_HYPOTHESIS", "LABEL_PROPOSED",
           "SessionContext", "file_overlap", "match_expression", "search", "tokens"]

DAY_MS = 86_400_000
POOL = 50  # candidates per source; pages within the first POOL results always come from the same pool
MAX_FILES = 32
MAX_REPHRASINGS = 4
PREFIX_MIN = 4  # shorter words match exactly: "db"* would match every word starting with db

# Weights. Text and exact file overlap carry the ranking; scope, outcome and age order otherwise close
# results (a verified team lesson with a strong match still beats a personal one with a weak match).
W_TEXT = 1.0
W_FILE = 0.8
W_SCOPE = {"personal": 0.15, "project": 0.10, "team": 0.05, "other-project": 0.0}
W_OUTCOME = 0.3  # times (rate - 1/2): a lesson nobody has cited yet neither gains nor loses
W_AGE = 0.05  # times 2^(-age / AGE_HALF_LIFE_DAYS): newer slightly preferred
AGE_HALF_LIFE_DAYS = 90
# BM25 column weights: text, applicability, tags, symptoms, cited path words.
BM25_SYMPTOM = (1.0, 1.0, 0.5, 1.0, 0.3)
BM25_TASK = (1.0, 2.0, 0.5, 0.6, 0.3)  # a task-shaped question: what a lesson says about when it applies
W_DENSE = 0.5  # the dense rankings' share of the text signal beside the lexical one (tuned on dev)
DENSE_K = 10  # reciprocal rank fusion constant of the dense rankings
DENSE_POOL = 15  # candidates per dense ranking: each adds a row to score; 10 lost recall@5 on the dev splits, 15 did not
KEEP_MARGIN = 0.01  # how far the lexical first is put ahead when it keeps its place
GATE = 2.0  # "gated": the dense weight shrinks as (1 - the lexical first's lead) ** GATE
FUSION = "gated"  # lexical magnitude plus dense ranks, the dense weight shrinking with the lexical lead;
# "add": the same at a fixed weight; "rrf": every ranking fused by rank alike (the first design)
RRF_K = 10  # reciprocal rank fusion: 1 / (RRF_K + rank), summed over the rankings a lesson is in
FUSED_POOL = 25  # candidates per ranking when several are fused: a lesson ranked below that adds little
MAX_SHARE = 0.1  # a query word more than this share of lessons contain is left out ...
KEEP_RAREST = 2  # ... unless fewer words than this would remain
MIN_TO_PRUNE = 500  # below this many lessons every word is cheap

_STATES = {False: ("verified",), True: ("verified", "proposed")}


def tokens(query: str) -> list[str]:
    """The words of ``query`` worth searching for (see ``gitive.index.words.tokens``)."""
    return words.tokens(query)


def match_expression(found: Sequence[str]) -> str | None:
    """A safe FTS5 MATCH expression ORing ``found`` words (None if there are none).

    Each word becomes a quoted string (a double quote inside is doubled), so user text can never be read as
    FTS5 syntax (``NEAR``, ``AND``, ``*``, ``-``, ``:``, parentheses); words of ``PREFIX_MIN`` or more
    characters also match as prefixes, and a known abbreviation also matches its long form.
    """
    terms = []
    for word in found:
        for form in (word, words.ABBREVIATIONS.get(word)):
            if form:
                quoted = '"' + form.replace('"', '""') + '"'
                terms.append(quoted + "*" if len(form) >= PREFIX_MIN else quoted)
    return " OR ".join(dict.fromkeys(terms)) or None


def _text_candidates(conn: sqlite3.Connection, expression: str | None, weights: tuple[float, ...], pool: int,
                     extra: Iterable[str]) -> dict[str, float]:
    """BM25 of the best ``pool`` text matches, and of the lessons in ``extra`` (file candidates) that match.

    One statement: FTS5 scores every match (once, materialized when ``extra`` needs a second look), and the
    lesson ids are read by rowid from ``lesson_text``. Rows of lessons no longer shown have no ``lesson_text``
    row and drop out of the join.
    """
    if expression is None:
        return {}
    listed = json.dumps(sorted(extra))
    bm25 = f"bm25(lesson_fts, {', '.join(map(str, weights))})"
    if listed == "[]":
        sql = f"""WITH top AS (SELECT rowid AS id, {bm25} AS b FROM lesson_fts
                               WHERE lesson_fts MATCH ?1 ORDER BY b LIMIT ?2)
                  SELECT t.lesson, top.b FROM top JOIN lesson_text t ON t.fts_rowid = top.id"""
        return dict(conn.execute(sql, (expression, pool)).fetchall())
    sql = f"""WITH m AS MATERIALIZED (SELECT rowid AS id, {bm25} AS b FROM lesson_fts WHERE lesson_fts MATCH ?1),
                   top AS (SELECT id, b FROM m ORDER BY b LIMIT ?2)
              SELECT t.lesson, top.b FROM top JOIN lesson_text t ON t.fts_rowid = top.id
              UNION
              SELECT t.lesson, m.b FROM json_each(?3) j CROSS JOIN lesson_text t ON t.lesson = j.value
              JOIN m ON m.id = t.fts_rowid"""
    return dict(conn.execute(sql, (expression, pool, listed)).fetchall())


def _normal_path(path: str) -> str:
    return path.replace("\\", "/").strip().removeprefix("./")


class _Row(NamedTuple):
    """What scoring needs of a candidate (the rest is read for the returned page only)."""

    lesson: str
    scope: str
    project: str
    at: int
    citations: int
    successes: int


# Eligible candidates: visible (admitted: ``admitted.where``, what ``visible_lessons`` shows, where a clean
# member's lesson needs no look at its entry), in an allowed state, with a text to show (their own or a
# reviewer's edit). CROSS JOIN keeps the plan on the candidate list (a state IN list would otherwise tempt the
# planner to walk every lesson of that state).
_ROWS = """
    SELECT l.id, l.scope_kind, l.scope_value, l.at, COALESCE(st.citations, 0), COALESCE(st.successes, 0)
    FROM json_each(?1) j CROSS JOIN lessons l ON l.id = j.value CROSS JOIN lesson_status s ON s.lesson = l.id
    LEFT JOIN lesson_stats st ON st.lesson = l.id
    WHERE s.state IN (SELECT value FROM json_each(?2)) AND {admitted}
      AND EXISTS (SELECT 1 FROM lesson_text t WHERE t.lesson = l.id)
"""


def _rows(conn: sqlite3.Connection, ids: Iterable[str], states: tuple[str, ...]) -> list[_Row]:
    sql = _ROWS.format(admitted=admitted.where(conn, "l", few=True))
    return [_Row(*row) for row in conn.execute(sql, (json.dumps(sorted(ids)), json.dumps(states)))]


def scope_key(scope: str, value: str, project: str | None) -> str:
    if scope == "project" and project is not None and value != project:
        return "other-project"
    return scope


_SCOPE_REASON = {"personal": "personal lesson (narrowest scope)", "project": "this project's lesson",
                 "team": "team-wide lesson", "other-project": "from another project"}


def _signals(row: _Row, text: float, overlap: float, project: str | None, now: int) -> list[tuple[float, str]]:
    """Each signal's contribution to the score and why, said plainly ("text" and "files" are spelled out
    for the returned page)."""
    parts: list[tuple[float, str]] = []
    if text > 0:
        parts.append((W_TEXT * text, "text"))
    if overlap > 0:
        parts.append((W_FILE * overlap, "files"))
    scope = scope_key(row.scope, row.project, project)
    if W_SCOPE[scope]:
        parts.append((W_SCOPE[scope], _SCOPE_REASON[scope]))
    if row.citations:
        rate = (row.successes + 1) / (row.citations + 2)
        parts.append((W_OUTCOME * (rate - 0.5),
                      f"outcome: {row.successes} of {row.citations} citing sessions succeeded"))
    age_days = max(0, (now - row.at) // DAY_MS)  # whole days, so a ranking holds still within a day
    parts.append((W_AGE * math.pow(2, -age_days / AGE_HALF_LIFE_DAYS), f"{age_days} days old"))
    return parts


def fuse(rankings: Sequence[dict[str, float]]) -> dict[str, float]:
    """One text-relevance figure in 0..1 per lesson from one or more rankings (higher scores better).

    One ranking keeps its magnitudes: each score relative to the best. Several (phrasings, backends) are
    fused by reciprocal rank fusion, ``sum(1 / (RRF_K + rank))``, relative to a lesson first in all of them,
    so a lesson every phrasing finds beats one that a single phrasing ranks first.
    """
    given = [r for r in rankings if r]
    if len(given) == 1:
        (only,) = given
        best = max(only.values())
        return {k: v / best for k, v in only.items() if v > 0} if best > 0 else {}
    fused: dict[str, float] = {}
    for ranking in given:
        for rank, lesson in enumerate(sorted(ranking, key=lambda k: (-ranking[k], k)), 1):
            fused[lesson] = fused.get(lesson, 0.0) + 1.0 / (RRF_K + rank)
    top = len(given) / (RRF_K + 1)
    return {k: v / top for k, v in fused.items()}


def fuse_dense(lexical: Sequence[dict[str, float]], dense: Sequence[dict[str, float]]) -> dict[str, float]:
    """Text relevance from the lexical rankings and the dense ones: the lexical figure (``fuse``) plus
    ``W_DENSE`` times the dense rankings' reciprocal rank fusion (``1 / (DENSE_K + rank)``, relative to a lesson
    first in all of them), over ``1 + W_DENSE`` so the text signal stays in 0..1.

    Lexical evidence keeps its magnitude: a lesson BM25 puts well ahead keeps its place unless the dense
    rankings put another one well ahead of it, while a lesson no word matches still comes in on meaning
    alone. Reciprocal rank fusion of everything together (the first design) let a dense ranking's order
    override a clear lexical first: hit@1 fell where lexical was right.
    """
    lex = fuse(lexical)
    given = [r for r in dense if r]
    if not given:
        return lex
    if FUSION == "rrf":
        return fuse([*lexical, *given])
    weight = W_DENSE
    if FUSION == "gated" and lex:
        ordered = sorted(lex.values(), reverse=True)
        lead = (ordered[0] - (ordered[1] if len(ordered) > 1 else 0.0)) / ordered[0] if ordered[0] > 0 else 0.0
        weight = W_DENSE * (1.0 - lead) ** GATE
    near: dict[str, float] = {}
    for ranking in given:
        for rank, lesson in enumerate(sorted(ranking, key=lambda k: (-ranking[k], k)), 1):
            near[lesson] = near.get(lesson, 0.0) + 1.0 / (DENSE_K + rank)
    top = len(given) / (DENSE_K + 1)
    return {k: (lex.get(k, 0.0) + weight * near.get(k, 0.0) / top) / (1 + weight) for k in lex.keys() | near.keys()}


def _telling(found: list[str], counts: dict[str, int] | None, total: int) -> list[str]:
    """``found`` without the words so common among the lessons that they cost a pass over much of the index
    and tell almost nothing (kept when fewer than ``KEEP_RAREST`` words would remain: then the rarest stay).
    ``counts``: how many lessons contain each word (None: unknown, every word is kept)."""
    if counts is None or total < MIN_TO_PRUNE or len(found) <= KEEP_RAREST:
        return found
    kept = [w for w in found if counts[w] <= MAX_SHARE * total]
    if len(kept) >= KEEP_RAREST:
        return kept
    rarest = set(sorted(found, key=lambda w: (counts[w], found.index(w)))[:KEEP_RAREST])
    return [w for w in found if w in rarest]


def _text_rankings(conn: sqlite3.Connection, phrasings: Sequence[list[str]], task: bool, pool: int,
                   by_file: Iterable[str]) -> list[dict[str, float]]:
    """One BM25 ranking per phrasing, as positive scores (FTS5's bm25 is negative, lower is better). How
    common each word is is read once for the words of every phrasing (they share most of them)."""
    weights = BM25_TASK if task else BM25_SYMPTOM
    extra = list(by_file)
    total = lesson_terms.shown(conn)
    asked = list(dict.fromkeys(w for found in phrasings if len(found) > KEEP_RAREST for w in found))
    counts = lesson_terms.frequencies(conn, asked, PREFIX_MIN) if asked and total >= MIN_TO_PRUNE else None
    out = []
    for found in phrasings:
        ranking = _text_candidates(conn, match_expression(_telling(found, counts, total)), weights, pool, extra)
        out.append({k: -v for k, v in ranking.items()})
    return out


def _score(row: _Row, text: float, overlap: float, project: str | None, now: int) -> float:
    """The sum of ``_signals``' contributions (the same additions in the same order, so the same float),
    without the reasons: every candidate is scored, only the returned page is explained."""
    score = W_TEXT * text if text > 0 else 0.0
    if overlap > 0:
        score += W_FILE * overlap
    score += W_SCOPE[scope_key(row.scope, row.project, project)]
    if row.citations:
        score += W_OUTCOME * ((row.successes + 1) / (row.citations + 2) - 0.5)
    return score + W_AGE * math.pow(2, -max(0, (now - row.at) // DAY_MS) / AGE_HALF_LIFE_DAYS)


# (score, row, signals added to its own by the ranking itself), best first
Ranked = list[tuple[float, "_Row", list[tuple[float, str]]]]


def _ranked(rows: list[_Row], text: dict[str, float], overlap: dict[str, float], project: str | None,
            now: int) -> Ranked:
    """(score, row, no added signals) per row, best first."""
    ranked: Ranked = [(_score(row, text.get(row.lesson, 0.0), overlap.get(row.lesson, 0.0), project, now), row, [])
                      for row in rows]
    ranked.sort(key=lambda r: (-r[0], r[1].lesson))
    return ranked


def _lexical_first(ranked: Ranked, text: dict[str, float], lexical: dict[str, float]) -> _Row:
    """The first of ``ranked`` as the lexical text figure alone would rank it: only the text signal differs,
    so each score is shifted by the difference rather than every signal computed again."""
    return min(((-(score + W_TEXT * (lexical.get(row.lesson, 0.0) - text.get(row.lesson, 0.0))), row.lesson), row)
               for score, row, _ in ranked)[1]


def _keep_lexical_first(ranked: Ranked, first: _Row, similar: dict[str, float], project: str | None,
                        floor: float) -> None:
    """Put the lexical ranking's first back in front (in place) unless meaning overrules it.

    Words that match are strong evidence; the dense model's order among near neighbours is weak (one static
    model's cosines of 0.30 and 0.35 say little). So the fused order may change the first place only when
    meaning finds the lexical first unrelated (its cosine below ``floor``, where unrelated text lies: it shares
    words with the question but not its sense) and the new first is nearer in meaning. And it never lets
    another project's lesson (a hypothesis) take the place of a lesson of this project or the team on meaning
    alone: sibling projects' lessons on the same topic are near each other in meaning, and the scope signal
    is what tells them apart. Below the first place the fused order stands (that is where dense lifts what
    words miss into the first five).
    """
    top = ranked[0][1]
    if top.lesson == first.lesson:
        return
    near_first, near_top = similar.get(first.lesson, 0.0), similar.get(top.lesson, 0.0)
    unrelated = near_first < floor and near_top > near_first
    hypothesis = (scope_key(top.scope, top.project, project) == "other-project"
                  and scope_key(first.scope, first.project, project) != "other-project")
    if unrelated and not hypothesis:
        return
    at = next(n for n, entry in enumerate(ranked) if entry[1].lesson == first.lesson)
    score, row, added = ranked.pop(at)
    lift = ranked[0][0] - score + KEEP_MARGIN
    ranked.insert(0, (score + lift, row, [*added, (lift, "first by its words, and not unrelated in meaning")]))


AUTO = "auto"  # search's default backend: whatever is configured or installed


def _configured_backend(repo: Repo | None) -> Backend | None:
    from gitive.lessons.semantic import for_repo

    return for_repo(repo)


def search(conn: sqlite3.Connection, query: str, *, files: Sequence[str] = (), project: str | None = None,
           include_proposed: bool = False, limit: int = 10, offset: int = 0,
           repo: Repo | None = None, rephrasings: Sequence[str] = (),
           semantic: Backend | str | None = AUTO, context: SessionContext | None = None) -> list[dict[str, Any]]:
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
        rephrasings: other wordings of the same question (at most ``MAX_REPHRASINGS``), each ranked on its
            own and fused with the query's ranking.
        semantic: the dense backend whose rankings are fused with BM25's. ``AUTO`` (the default): the one
            configured for ``repo`` or by ``GITIVE_RECALL_MODEL``, else the packaged model when
            ``gitive[semantic]`` is installed (``lessons.semantic.for_repo``); None: lexical only.
        context: the session's branch, changed files and commit subjects (``recall_context.from_repo``):
            for a question worded as a task, one more phrasing and a discounted file signal. File names
            written in ``query`` count as given files whether or not a context is given.

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
    if isinstance(semantic, str):
        semantic = _configured_backend(repo)
    task = words.task_shaped(query)
    texts = [t for t in dict.fromkeys([query, *list(rephrasings)[:MAX_REPHRASINGS]]) if t.strip()]
    changed: Sequence[str] = ()
    if context is not None and task:
        texts += [t for t in [recall_context.phrasing(context)] if t.strip() and t not in texts]
        changed = [p for p in map(_normal_path, context.changed) if p]
    phrasings = [found for found in (tokens(t) for t in texts) if found]
    named = [*files, *recall_context.prompt_files(query)]
    paths = list(dict.fromkeys(p for p in map(_normal_path, named) if p))[:MAX_FILES]
    pool = POOL * math.ceil((offset + limit) / POOL)
    weighted = recall_context.file_weights(conn, paths, changed)
    by_file = lesson_files.candidates(conn, weighted, pool)
    lists = len(phrasings) + (len(texts) if semantic is not None else 0)
    each = pool if lists <= 1 else max(FUSED_POOL, pool // lists)
    rankings = _text_rankings(conn, phrasings, task, each, by_file)
    worded = [t for t, found in zip(texts, (tokens(t) for t in texts), strict=True) if found]  # "how do I do it": none
    near = semantic.near(conn, worded, min(each, DENSE_POOL)) if semantic is not None and worded else None
    dense = near.rankings if near is not None else []
    text = fuse_dense(rankings, dense)
    if not text and not by_file:
        return []
    missing = set(text) - set(by_file)
    overlap = {**by_file, **lesson_files.overlap_of(conn, weighted, missing)} if missing else by_file
    rows = _rows(conn, text.keys() | by_file.keys(), _STATES[include_proposed])
    ranked = _ranked(rows, text, overlap, project, now)
    if near is not None and dense and ranked:
        first = _lexical_first(ranked, text, fuse(rankings))
        _keep_lexical_first(ranked, first, near.similarity({ranked[0][1].lesson, first.lesson}), project,
                            semantic.floor)
    page = [(score, row.lesson, scope_key(row.scope, row.project, project) == "other-project",
             [*_signals(row, text.get(row.lesson, 0.0), overlap.get(row.lesson, 0.0), project, now), *added])
            for score, row, added in ranked[offset:offset + limit]]
    return present(conn, page, [w for found in phrasings for w in found], paths, now, repo)
