"""Choosing who reviews a lesson: the owner of its evidence, from CODEOWNERS or recent history."""

from __future__ import annotations

import fnmatch
import sqlite3
from collections import Counter
from typing import TYPE_CHECKING, Any, NamedTuple

from gitive.store import objects

if TYPE_CHECKING:
    from gitive.store.types import Repo

CODEOWNERS_PATHS = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS", ".gitlab/CODEOWNERS")


class Choice(NamedTuple):
    person: str | None
    reason: str


def _pattern_matches(pattern: str, path: str) -> bool:
    """gitignore-style matching as CODEOWNERS uses it: a pattern with a slash is anchored at the root, one
    without matches at any depth, and matching a directory covers every file below it."""
    if pattern in ("*", "/*", "**"):
        return True
    pat = pattern.strip("/")
    anchored = pattern.startswith("/") or ("/" in pat and not pat.startswith("**/"))
    pat = pat.removeprefix("**/")
    parts = path.split("/")
    # every directory prefix and the path itself, and with an unanchored pattern every suffix of those
    spans = [(i, j) for i in range(1 if anchored else len(parts)) for j in range(i + 1, len(parts) + 1)]
    return any(fnmatch.fnmatchcase("/".join(parts[i:j]), pat) for i, j in spans)


def codeowners(text: str, path: str) -> list[str]:
    """Owners of ``path``: the last matching rule wins, as GitHub and GitLab read the file."""
    owners: list[str] = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line or line.startswith("["):
            continue
        pattern, *names = line.split()
        if _pattern_matches(pattern, path):
            owners = names
    return owners


def _person_for(owner: str, members: list[dict[str, Any]]) -> str | None:
    handle = owner.lstrip("@").lower()
    for m in members:
        if handle == m["person"] or handle in (e.lower() for e in m["emails"]):
            return m["person"]
    if "/" in handle:  # @org/team: not a person the roster knows
        return None
    return None


def choose(repo: Repo, conn: sqlite3.Connection, scope_kind: str, author_person: str,
           files: list[str]) -> Choice:
    """Who should review a lesson with these evidence files."""
    from gitive.index import queries

    if scope_kind == "personal":
        return Choice(author_person, "personal lessons are reviewed by their own person")
    members = [m for m in queries.members(conn) if m["active"] and m["role"] != "anchor"]
    text = next((t for t in map(lambda p: objects.read_head_file(repo, p), CODEOWNERS_PATHS) if t), None)
    if text and files:
        votes: Counter[str] = Counter()
        for path in files:
            for owner in codeowners(text, path):
                person = _person_for(owner, members)
                if person:
                    votes[person] += 1
        if votes:
            person, _ = votes.most_common(1)[0]
            return Choice(person, "CODEOWNERS owner of the evidence files")
    by_email = {e.lower(): m["person"] for m in members for e in m["emails"]}
    counts = Counter(by_email[e] for e in objects.recent_author_emails(repo, files) if e in by_email)
    if counts:
        person, n = counts.most_common(1)[0]
        return Choice(person, f"most commits to the evidence files in the last 30 days ({n})")
    return Choice(None, "no CODEOWNERS entry or recent commit names a member: any member may review")
