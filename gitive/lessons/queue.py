"""The review queue: lessons awaiting a decision, each with the reviewer its evidence points to."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from gitive.lessons import catalog, evidence, reviewer

if TYPE_CHECKING:
    from gitive.store.types import Repo


def pending(conn: sqlite3.Connection, repo: Repo, person: str, everyone: bool = False
            ) -> list[dict[str, Any]]:
    """Proposed and held lessons for ``person`` (those whose chosen reviewer is them or nobody), oldest first."""
    out = []
    for lesson in reversed(catalog.listing(conn, states=("proposed", "held"), limit=10_000)):
        choice = reviewer.choose(repo, conn, lesson["scope"], lesson["author"], evidence.files(lesson["evidence"]))
        lesson["suggested_reviewer"], lesson["reviewer_reason"] = choice.person, choice.reason
        if lesson["scope"] == "personal" and lesson["author"] != person:
            continue
        if everyone or choice.person in (None, person):
            out.append(lesson | catalog.matched_on(conn, lesson))  # the card shows what recall matches on
    return out
