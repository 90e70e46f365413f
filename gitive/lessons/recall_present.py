"""The returned page of a search: provenance, the text shown, labels, reasons said plainly, stale evidence."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from gitive.index import lesson_files, words
from gitive.lessons import evidence as evidence_mod
from gitive.lessons.catalog import HELD_AFTER_MS

if TYPE_CHECKING:
    from gitive.store.types import Repo

DAY_MS = 86_400_000
FILE_EXACT, FILE_DIR, FILE_NAME = lesson_files.EXACT, lesson_files.SAME_DIR, lesson_files.SAME_NAME
LABEL_PROPOSED = "proposed — not reviewed"
LABEL_HELD = "held — not reviewed, no answer in 24 h"
LABEL_HYPOTHESIS = "hypothesis — learned in another project"
PREFIX_MIN = 4

_WORD = re.compile(r"[^\W_]+")

_DETAILS = """
    SELECT l.id, l.rowid, l.kind, l.evidence, l.tags, l.author, l.scope_kind, l.scope_value, l.at, s.state,
           s.approver, m.person, b.text, b.applicability, COALESCE(st.citations, 0), COALESCE(st.successes, 0)
    FROM lessons l JOIN lesson_status s ON s.lesson = l.id JOIN members m ON m.machine = l.author
    JOIN lesson_text t ON t.lesson = l.id JOIN lesson_bodies b ON b.body_hash = t.body_hash
    LEFT JOIN lesson_stats st ON st.lesson = l.id
    WHERE l.id IN (SELECT value FROM json_each(?))
"""

Page = Sequence[tuple[float, str, bool, list[tuple[float, str]]]]  # score, lesson, hypothesis, signal parts


def file_overlap(lesson_files_: Sequence[str], files: Sequence[str]) -> tuple[float, list[str]]:
    """How much a lesson's cited files overlap ``files`` (0 to 1.5), and why, said plainly.

    A cited path that is one of ``files`` counts most, one in the same directory or with the same file name
    less. The best match counts fully and every further matched file adds a quarter of its own weight.
    (Search scores the same way in SQL, with a file many lessons cite counting for less.)
    """
    found: list[tuple[float, str]] = []
    for path in files:
        directory, _, name = path.rpartition("/")
        best: tuple[float, str] = (0.0, "")
        for cited in lesson_files_:
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


def _matched_words(found: Sequence[str], text: str, applicability: str, tags: Sequence[str]) -> list[str]:
    """Query words that visibly occur in the lesson (a rough echo of what FTS5 matched, for the reasons)."""
    haystack = " " + " ".join(_WORD.findall(" ".join([text, applicability, *tags]).lower()))
    return [w for w in dict.fromkeys(found) if " " + w[:max(PREFIX_MIN, len(w) - 4)] in haystack
            or " " + words.ABBREVIATIONS.get(w, "\0") in haystack]


def _reason(why: str, item: dict[str, Any], found: Sequence[str], paths: Sequence[str]) -> str:
    if why == "text":
        matched = ", ".join(_matched_words(found, item["text"], item["applicability"], item["tags"]))
        return "text matches " + (matched or "the question")
    if why == "files":
        return "; ".join(file_overlap(item["files"], paths)[1]) or "cites files near these"
    return why


def present(conn: sqlite3.Connection, page: Page, found: Sequence[str], paths: Sequence[str], now: int,
            repo: Repo | None) -> list[dict[str, Any]]:
    """The result dicts of one page: provenance, text, labels, reasons and stale evidence."""
    details = {d[0]: d for d in conn.execute(_DETAILS, (json.dumps([lesson for _, lesson, _, _ in page]),))}
    cited = lesson_files.files_of(conn, [d[1] for d in details.values()])
    out = []
    for score, lesson, hypothesis, parts in page:
        (_, rowid, kind, evidence, tags, machine, scope, project, at, state, approver, person, text,
         applicability, citations, successes) = details[lesson]
        item: dict[str, Any] = {
            "id": lesson, "kind": kind, "scope": scope, "project": project or None, "state": state,
            "origin": person, "author": person, "author_machine": machine, "reviewer": approver, "at": at,
            "age_days": round((now - at) / DAY_MS, 1), "score": round(score, 4), "text": text,
            "applicability": applicability or "", "tags": json.loads(tags), "files": cited.get(rowid, []),
            "evidence": json.loads(evidence), "citations": citations, "successes": successes,
            "outcome_rate": (successes + 1) / (citations + 2),
        }
        item["reasons"] = [_reason(why, item, found, paths)
                           for value, why in sorted(parts, key=lambda p: -abs(p[0])) if abs(value) >= 0.005]
        label(item, hypothesis, now)
        item["stale"] = None if repo is None or item["hypothesis"] else evidence_mod.stale(repo, item["evidence"])
        out.append(item)
    return out


def label(item: dict[str, Any], hypothesis: bool, now: int) -> None:
    """Set ``state`` (proposed becomes held after 24 h), ``verified``, ``hypothesis`` and ``label``."""
    if item["state"] == "proposed" and now - item["at"] > HELD_AFTER_MS:
        item["state"] = "held"
    item["verified"] = item["state"] == "verified"
    item["hypothesis"] = hypothesis
    labels = {"proposed": [LABEL_PROPOSED], "held": [LABEL_HELD]}.get(item["state"], [])
    if item["hypothesis"]:
        labels.append(LABEL_HYPOTHESIS)
    item["label"] = "; ".join(labels) or None
