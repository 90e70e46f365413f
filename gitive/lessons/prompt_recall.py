"""Prompt-time recall: the lessons a user's prompt calls for, ranked by the recall ``gitive lessons search``
uses (``gitive.lessons.recall.search``), against the prompt's words and the file names in it.

The daemon runs this when a hook tells it a prompt arrived (op ``prepare``) and leaves the picks in the
session's spool; a hook runs it itself only when no daemon is there (it then imports the recall module, the
one place a hook loads more than the standard library: ``blake3``, a compiled module of about a millisecond;
the hook's ranking is lexical, since loading the dense model would spend its budget, while the daemon fuses the
dense backend as ``gitive lessons search`` does, with the model loaded and the vectors stored in advance).
Only a real match is injected: a lesson citing a file the prompt names, or one matching at least two of the
prompt's words, one of them rare among the lessons; the second lesson only when it scores close to the first.
The index is opened read-only with temp tables allowed, so recall reads word frequencies as ``gitive lessons
search`` does.
"""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

from gitive.capture import framing

PROMPT_LESSONS = 2
SECOND_WITHIN = 0.85  # the second pick must score at least this share of the first
MIN_WORDS = 2  # matched prompt words a lesson needs without a file match ...
RARE_SHARE = 0.1  # ... RARE_WORDS of them in at most this share of the lessons (else the match says little)
RARE_WORDS = 2
_PATHLIKE = re.compile(r"(?<![\w@:/.-])(?:\.{0,2}/)?(?:[\w.-]+/)*[\w-][\w.-]*\.[A-Za-z][\w]{0,7}(?![\w/])")
_URLISH = re.compile(r"^[\w.-]+\.(?:com|org|net|io|dev|example|test)$")


def files_in(prompt: str, toplevel: str | Path | None = None) -> list[str]:
    """The file names a prompt mentions (``net/retry.py``, ``./app/cache.py``, an absolute path inside the
    repository), repository-relative where they can be made so; version numbers and host names are not files."""
    root = str(toplevel).rstrip("/") + "/" if toplevel else None
    out: list[str] = []
    for match in _PATHLIKE.finditer(prompt[:20_000]):
        path = match.group(0).rstrip(".")
        if root and path.startswith(root):
            path = path[len(root):]
        path = path.removeprefix("./")
        if path.startswith(("../", "/")) or _URLISH.match(path) or re.fullmatch(r"[\d.]+[a-z]?\d*", path):
            continue
        if path not in out:
            out.append(path)
    return out[:16]


def _matched(result: dict[str, Any]) -> tuple[bool, list[str]]:
    """Whether a result matched a named file, and which of the prompt's words it matched."""
    files = any(r.startswith("cites ") and ", " not in r for r in result.get("reasons") or [])  # exact
    words: list[str] = []
    for reason in result.get("reasons") or []:
        if reason.startswith("text matches ") and reason != "text matches the question":
            words = reason.removeprefix("text matches ").split(", ")
    return files, words


def _telling(conn: sqlite3.Connection, words: list[str]) -> bool:
    """At least two matched words, one of them rare among the lessons ("run the tests" matches half of
    them on two words and says nothing); true when frequencies cannot be read."""
    from gitive.index import lesson_terms

    if len(words) < MIN_WORDS:
        return False
    counts = lesson_terms.frequencies(conn, words, 4)
    total = lesson_terms.shown(conn)
    return counts is None or sum(n <= max(2, RARE_SHARE * total) for n in counts.values()) >= RARE_WORDS


def frame(result: dict[str, Any]) -> str:
    extra = {"kind": str(result.get("kind") or "")}
    if result.get("hypothesis"):
        extra["label"] = "hypothesis: from another project"
    body = str(result["text"]) + (f"\n(applies when: {result['applicability']})" if result.get("applicability")
                                  else "")
    return framing.lesson_frame(str(result["id"])[:16], str(result["scope"]), result.get("reviewer"), True,
                                body, extra)


def best(conn: sqlite3.Connection, prompt: str, project: str | None, shown: set[str],
         toplevel: str | Path | None = None, limit: int = PROMPT_LESSONS, dense: bool = True
         ) -> list[dict[str, Any]]:
    """The verified lessons to inject for ``prompt`` (none already ``shown``), best first: ``{"id", "frame",
    "score"}`` each. ``dense``: fuse the configured dense backend as ``gitive lessons search`` does (the
    daemon, which keeps the model loaded); False: lexical only (a hook ranking without a daemon, where loading
    the model would cost about 0.45 s of CPU and 1.6 s of wall time on a loaded machine: the whole budget)."""
    from gitive.lessons import recall

    files = files_in(prompt, toplevel)
    if not recall.tokens(prompt) and not files:
        return []
    results = recall.search(conn, prompt, files=files, project=project, limit=limit + len(shown) + 4,
                            semantic=recall.AUTO if dense else None)
    picks: list[dict[str, Any]] = []
    for result in results:
        if result["id"] in shown or not result.get("verified"):
            continue
        by_file, words = _matched(result)
        if not by_file and not _telling(conn, words):
            continue
        if picks and result["score"] < SECOND_WITHIN * picks[0]["score"]:
            break
        picks.append({"id": result["id"], "frame": frame(result), "score": result["score"]})
        if len(picks) == limit:
            break
    return picks
