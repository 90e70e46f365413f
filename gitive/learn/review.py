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

    Raises:
        GitiveError: the draft is a promise (obligations are not proposed from here yet), or a write-time rule
            refused the lesson; nothing was written then.
    """
    if draft["kind"] != "lesson":
        raise GitiveError("promises are kept as drafts: proposing them as obligations needs the obligations "
                          "feature, which this version does not have yet; skip it or keep it for later")
    from gitive.index.refresh import fresh_index
    from gitive.lessons.propose import propose
    from gitive.team.hive import open_hive

    hive = open_hive(draft["repo"] or None)
    with fresh_index(hive) as (conn, _):
        done = propose(hive, conn, kind=draft["lesson_kind"], text=draft["text"],
                       applicability=draft["applicability"], evidence=list(draft["evidence"]),
                       tags=["quiet-pass", *([f"signature:{draft['signature']}"] if draft.get("signature") else [])],
                       scope=scope, symptoms=list(draft["symptoms"]),
                       session=None)
    return done.id


def decide(draft_id: str, state: str, lesson: str | None = None) -> None:
    with store.connect() as conn:
        store.decide(conn, draft_id, state, lesson)


def edit(draft_id: str, text: str, applicability: str | None = None) -> None:
    """Replace a draft's text (a person's edit), checked as a lesson's text would be."""
    from gitive.lessons.rules import check_text

    check_text(text)
    with store.connect() as conn:
        store.update_text(conn, draft_id, text, applicability)
