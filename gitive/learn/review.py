"""Deciding on drafts: accept (propose it as a lesson), edit, skip; and the accept rate that says whether to go on.

Accepting is the one step where a draft's content leaves the local store: it becomes a *proposed* lesson in the
draft's repository, signed by this machine, which a person then reviews like any other (``gitive review``).
Nothing here approves anything. Skips are counted; a person whose accept rate stays low is told they can turn
extraction off (``gitive learn --off``).
"""

from __future__ import annotations

import sqlite3
from typing import Any, NamedTuple

from gitive.errors import GitiveError
from gitive.learn import store

LOW_RATE, MIN_DECISIONS = 0.2, 10


class Rate(NamedTuple):
    accepted: int
    skipped: int
    waiting: int

    @property
    def decided(self) -> int:
        return self.accepted + self.skipped

    @property
    def low(self) -> bool:
        """Enough decisions to judge, and few of them accepts."""
        return self.decided >= MIN_DECISIONS and self.accepted / self.decided < LOW_RATE

    def said(self) -> str:
        if not self.decided:
            return f"{self.waiting} waiting; nothing decided yet"
        text = (f"{self.accepted} of {self.decided} drafts accepted ({self.accepted / self.decided:.0%}), "
                f"{self.skipped} skipped, {self.waiting} waiting")
        if self.low:
            text += "; few are worth keeping: `gitive learn --off` turns extraction off"
        return text


def rate(conn: sqlite3.Connection) -> Rate:
    counts = store.counts(conn)
    return Rate(counts["accepted"], counts["skipped"], counts["new"])


def accept(draft: dict[str, Any], scope: str = "project") -> str:
    """Propose ``draft`` as a lesson in its repository; return the lesson id.

    A correction's draft carries the person's words as its quote, checked literally against the prompt event
    it cites (the quote-grounding rule).

    Raises:
        GitiveError: the draft is a promise (obligations are not proposed from here yet), or a write-time rule
            refused the lesson; nothing was written then.
    """
    if draft["kind"] != "lesson":
        raise GitiveError("promises are kept as drafts: proposing them as obligations needs the obligations "
                          "feature, which this version does not have yet; skip it or keep it for later")
    return _propose(draft, scope=scope)


def _propose(draft: dict[str, Any], *, scope: str = "project", supersedes: str | None = None,
             base: dict[str, Any] | None = None) -> str:
    """Write the proposal; ``base``: the verified lesson whose text, kind and evidence a new version keeps."""
    from gitive.index.refresh import fresh_index
    from gitive.lessons.propose import make_quote, propose
    from gitive.team.hive import open_hive

    hive = open_hive(draft["repo"] or None)
    with fresh_index(hive) as (conn, _):
        quoted = (draft.get("detail") or {}).get("quote")
        speaker = _person(conn, hive.me) if quoted else None
        kept = base or {}
        done = propose(hive, conn, kind=kept.get("kind") or draft["lesson_kind"],
                       text=kept.get("text") or draft["text"],
                       applicability=kept.get("applicability", draft["applicability"]) or "",
                       quote=kept["quote"] if "quote" in kept else make_quote(quoted, speaker),
                       evidence=[*_specs(kept.get("evidence", [])), *draft["evidence"]],
                       tags=sorted({*kept.get("tags", []), "quiet-pass",
                                    *([f"signature:{draft['signature']}"] if draft.get("signature") else [])}),
                       scope=scope if not base else _scope_name(kept), supersedes=supersedes,
                       symptoms=list(dict.fromkeys([*kept.get("symptoms", []), *draft["symptoms"]]))[:8],
                       session=None)
    return done.id


def add_evidence(draft: dict[str, Any], lesson: str) -> str:
    """A new version of verified ``lesson`` with its own words and this draft's evidence and symptoms added
    (superseding it once approved); return the new lesson's id."""
    return _propose(draft, supersedes=lesson, base=_lesson(draft, lesson))


def supersede(draft: dict[str, Any], lesson: str) -> str:
    """The draft proposed as the successor of ``lesson`` (keeping that lesson's evidence and symptoms)."""
    found = _lesson(draft, lesson)
    base = {"evidence": found["evidence"], "symptoms": found["symptoms"], "tags": found["tags"]}
    return _propose(draft, supersedes=lesson, scope=_scope_name(found), base=base)


def _lesson(draft: dict[str, Any], lesson: str) -> dict[str, Any]:
    from gitive.index.refresh import fresh_index
    from gitive.lessons import catalog
    from gitive.team.hive import open_hive

    with fresh_index(open_hive(draft["repo"] or None)) as (conn, _):
        found = catalog.get(conn, lesson)
        row = conn.execute("SELECT b.symptoms FROM lesson_text t JOIN lesson_bodies b ON b.body_hash = t.body_hash "
                           "WHERE t.lesson = ?", (lesson,)).fetchone()
    import json

    return {**found, "symptoms": list(json.loads(row[0])) if row and row[0] else []}


def _specs(items: list[dict[str, Any]]) -> list[str]:
    """An existing lesson's evidence as specs ``propose`` resolves again: commits and files (other machines'
    events cannot be cited from here; the old version keeps them)."""
    out = []
    for item in items:
        if item.get("kind") == "commit" and item.get("ref"):
            out.append(f"commit:{item['ref']}")
        elif item.get("kind") == "file" and item.get("path"):
            out.append(f"file:{item['path']}")
    return list(dict.fromkeys(out))


def _scope_name(lesson: dict[str, Any]) -> str:
    scope = lesson.get("scope")
    return scope if isinstance(scope, str) and scope in ("personal", "project", "team") else "project"


def _person(conn: Any, machine: str) -> str:
    row = conn.execute("SELECT person FROM members WHERE machine = ?", (machine,)).fetchone()
    return str(row[0]) if row else "the person"


def decide(draft_id: str, state: str, lesson: str | None = None) -> None:
    with store.connect() as conn:
        store.decide(conn, draft_id, state, lesson)


def edit(draft_id: str, text: str, applicability: str | None = None) -> None:
    """Replace a draft's text (a person's edit), checked as a lesson's text would be."""
    from gitive.lessons.rules import check_text

    check_text(text)
    with store.connect() as conn:
        store.update_text(conn, draft_id, text, applicability)
