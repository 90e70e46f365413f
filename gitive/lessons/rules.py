"""Write-time rules for a proposed lesson: each refusal says what is wrong and what to do."""

from __future__ import annotations

import re
from typing import Any

from gitive.core.records import LESSON_KINDS
from gitive.errors import InvalidRecord
from gitive.lessons.evidence import MAX_COMMIT_FILES, Resolved
from gitive.lessons.model import MAX_SYMPTOM, MAX_SYMPTOMS, MAX_TEXT

NEEDS_QUOTE = ("Preference", "Decision")
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
                         "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
                         "\u00ab": '"', "\u00bb": '"', "\u2010": "-", "\u2011": "-", "\u2012": "-",
                         "\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-"})
_SPACE = re.compile(r"\s+")


def normalize(text: str) -> str:
    """Fold typographic quotes and dashes to ASCII and runs of white space to one space; nothing else."""
    return _SPACE.sub(" ", text.translate(_QUOTES)).strip()


def check_kind(kind: str) -> None:
    if kind not in LESSON_KINDS:
        raise InvalidRecord(f"unknown lesson kind {kind!r}; use one of {', '.join(LESSON_KINDS)}")


def check_text(text: str) -> None:
    if not text.strip():
        raise InvalidRecord("a lesson needs text")
    if len(text) > MAX_TEXT:
        raise InvalidRecord(f"lesson text is {len(text)} characters; the limit is {MAX_TEXT}: shorten it")


def check_quote(kind: str, quote: dict[str, Any] | None, evidence: list[Resolved]) -> bool:
    """Check the quote rules; return whether the lesson is hearsay.

    A quote about another person than its speaker is hearsay: stored, labelled, never that person's own
    preference. Where evidence text is reachable here, the quoted words must occur in it literally.
    """
    if quote is None:
        if kind in NEEDS_QUOTE:
            raise InvalidRecord(f"a {kind} needs a quote: the words of the person it comes from (--quote, --speaker)")
        return False
    words = quote.get("words", "")
    if not isinstance(words, str) or not words.strip() or not quote.get("speaker"):
        raise InvalidRecord("a quote needs a speaker and the words they said")
    reachable = [r.text for r in evidence if r.text is not None]
    if reachable:
        needle = normalize(words)
        if not any(needle in normalize(text) for text in reachable):
            raise InvalidRecord("the quoted words are not in the cited evidence: quote it literally "
                                "(only quotes, dashes and white space may differ) or cite where it was said")
    about = quote.get("about")
    return bool(about) and about != quote["speaker"]


# A commit that changed more files than this says little about any one of them: matched on all of them, a
# lesson would be shown for an edit to any (a root commit cites a whole tree).
COMMIT_FILES_TO_CHOOSE = 10


def check_evidence(evidence: list[Resolved]) -> None:
    """Evidence there is, and a large commit's files chosen: without ``file:`` evidence such a commit is
    refused (naming how to choose); with it, the commit stays cited but only the chosen files are matched.

    Raises:
        InvalidRecord: no evidence, or a commit of more than ``COMMIT_FILES_TO_CHOOSE`` files and no file cited.
    """
    if not evidence:
        raise InvalidRecord("a lesson needs evidence: cite or omit (--evidence commit:REV, file:PATH, …)")
    chosen = any(r.item["kind"] == "file" for r in evidence)
    for r in evidence:
        files = r.item.get("files") if r.item["kind"] == "commit" else None
        if files is None or len(files) <= COMMIT_FILES_TO_CHOOSE:
            continue
        if not chosen:
            many = f"{len(files)}" + (" or more" if len(files) >= MAX_COMMIT_FILES else "")
            raise InvalidRecord(f"commit {r.item['ref'][:12]} changed {many} files, so the lesson would be shown "
                                "for an edit to any of them: say which it is about with -e file:PATH (the commit "
                                "stays cited)")
        r.item["files"] = []  # the cited files say what it is about; the commit is evidence, matched on none


def clean_symptoms(symptoms: list[str] | None) -> list[str]:
    """Symptoms as stored: each on one line, trimmed, empty ones and repeats dropped, order kept.

    Raises:
        InvalidRecord: more than ``MAX_SYMPTOMS``, or one longer than ``MAX_SYMPTOM`` characters.
    """
    out: dict[str, None] = {}
    for raw in symptoms or []:
        if not isinstance(raw, str):
            raise InvalidRecord(f"a symptom must be text, not {type(raw).__name__}")
        line = _SPACE.sub(" ", raw).strip()
        if len(line) > MAX_SYMPTOM:
            raise InvalidRecord(f"a symptom is {len(line)} characters; the limit is {MAX_SYMPTOM}: keep the "
                                "telling part of the error line or question")
        if line:
            out.setdefault(line, None)
    if len(out) > MAX_SYMPTOMS:
        raise InvalidRecord(f"{len(out)} symptoms; at most {MAX_SYMPTOMS}: keep the ones an agent would meet first")
    return list(out)
