"""Task-start recall: a question worded as the task being started says little ("add a retry here"); the
session's own context says more. The branch name and the recent commit subjects are words about the task, the
files changed in the work tree and the file names in the prompt are where it happens.

``search`` takes a :class:`SessionContext` and, for a task-shaped question, ranks one more phrasing made of
the branch's and commits' words (matched against what lessons say about when they apply) and adds the changed
files to the file signal at a discount (an edited file is a weaker hint than one the agent names). File names
written in the prompt itself count as named files for every question. :func:`from_repo` reads the context of
a checkout (the daemon and the CLI call it; nothing here runs git).
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

from gitive.index import lesson_files

if TYPE_CHECKING:
    from gitive.store.types import Repo

MAX_CHANGED = 16
MAX_COMMITS = 5
CHANGED_WEIGHT = 0.5  # a changed file's match counts this much of a named file's
# Branch names that say nothing about the task, and the prefixes and ticket ids that say nothing either.
_IDLE_BRANCHES = frozenset({"main", "master", "develop", "dev", "trunk", "head"})
_NOISE = re.compile(r"^(?:feature|feat|fix|bugfix|hotfix|chore|wip|refactor|topic|users?|[a-z]+-?\d+)$", re.I)
_TICKET = re.compile(r"\b[A-Z][A-Z0-9]*-\d+\b:?|\b(?:wip|fixup!|squash!)\b:?", re.I)
_EXTENSIONS = ("py", "pyi", "ts", "tsx", "js", "jsx", "mjs", "go", "rs", "java", "kt", "rb", "php", "cs", "c",
               "h", "cc", "cpp", "swift", "yaml", "yml", "json", "toml", "ini", "cfg", "sql", "proto", "md",
               "sh", "html", "css", "scss", "vue", "lock", "txt", "env", "mod", "sum")
_PATH = re.compile(r"(?<![\w@:/.-])((?:[\w.@-]+/)*[\w@-][\w.@-]*\.(?:" + "|".join(_EXTENSIONS) + r"))(?![\w/-])")
_SPLIT = re.compile(r"[/_.\s-]+")


class SessionContext(NamedTuple):
    """What the session shows about the task: the branch, the files changed in the work tree (and in the
    branch's own commits), and the subjects of its recent commits."""

    branch: str = ""
    changed: tuple[str, ...] = ()
    commits: tuple[str, ...] = ()


def prompt_files(text: str) -> list[str]:
    """File names written in ``text`` (``src/api/client.ts``, ``settings.py``), in order, once each; a URL's
    path is not one."""
    cleaned = re.sub(r"\w+://\S+", " ", text)
    return list(dict.fromkeys(m.group(1).strip("./") for m in _PATH.finditer(cleaned)))


def branch_words(branch: str) -> str:
    """The words of a branch name that say something about the task (``feature/FL-881-invoice-pdf`` ->
    ``invoice pdf``); nothing for main and the like."""
    if branch.strip().lower() in _IDLE_BRANCHES:
        return ""
    parts = [p for p in _SPLIT.split(_TICKET.sub(" ", branch.replace("_", " "))) if p and not _NOISE.match(p)]
    return " ".join(parts)


def phrasing(context: SessionContext) -> str:
    """One more phrasing of a task-shaped question: the branch's words and the recent commit subjects."""
    subjects = [_TICKET.sub(" ", s).strip() for s in context.commits[:MAX_COMMITS]]
    return " ".join(p for p in [branch_words(context.branch), *subjects] if p.strip())


def file_weights(conn: sqlite3.Connection, named: Sequence[str], changed: Sequence[str]) -> str:
    """``lesson_files.weights`` for the named files and, at ``CHANGED_WEIGHT``, the changed files that were
    not named: one JSON list, so the file signal scores both in one statement."""
    weighted = json.loads(lesson_files.weights(conn, named))
    extra = [p for p in dict.fromkeys(changed) if p not in set(named)][:MAX_CHANGED]
    if extra:
        offset = len(named)
        for query, path, weight, cut in json.loads(lesson_files.weights(conn, extra)):
            weighted.append([query + offset, path, weight * CHANGED_WEIGHT, cut])
    return json.dumps(weighted) if weighted else "[]"


def from_repo(repo: Repo | None) -> SessionContext | None:
    """The context of the checkout ``repo`` (None when there is none to read)."""
    if repo is None:
        return None
    from gitive.store.session_context import read

    branch, changed, subjects = read(repo, MAX_CHANGED, MAX_COMMITS)
    return SessionContext(branch or "", tuple(changed), tuple(subjects))
