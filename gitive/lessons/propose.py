"""Proposing a lesson: write-time rules, then the body into the body store and the header into the log."""

from __future__ import annotations

import sqlite3
from typing import Any, NamedTuple

from gitive.index.catchup import catch_up
from gitive.lessons import evidence as evidence_mod
from gitive.lessons import model, rules, writing
from gitive.lessons.placement import place
from gitive.team.hive import Hive


class Proposed(NamedTuple):
    id: str
    created: bool  # false: an identical proposal already existed
    scope: str
    audience: str
    hearsay: bool


def make_quote(words: str | None, speaker: str | None, about: str | None = None,
               at: int | None = None) -> dict[str, Any] | None:
    """A quote record; ``at`` only when known, so the same proposal made twice has the same id."""
    if not words:
        return None
    quote: dict[str, Any] = {"speaker": speaker or "", "words": words}
    if at is not None:
        quote["at"] = at
    if about:
        quote["about"] = about
    return quote


def propose(hive: Hive, conn: sqlite3.Connection, *, kind: str, text: str, applicability: str = "",
            quote: dict[str, Any] | None = None, evidence: list[str], tags: list[str] | None = None,
            scope: str = "project", supersedes: str | None = None, session: str | None = None,
            symptoms: list[str] | None = None, sealed: bool | None = None) -> Proposed:
    """Check and write a lesson proposal (state ``proposed`` until a person reviews it).

    ``symptoms`` are how the problem shows up (error lines, the questions the lesson answers); they are
    stored in the body and indexed, so a later question worded differently from the text still finds it.
    ``sealed`` seals a project lesson to the team's machines (default: the repository's ``hive.sealed``).
    ``session`` is a label already checked by :func:`gitive.daemon.own_sessions.session_label` (sessions are
    the daemon's, a floor above).

    Raises:
        InvalidRecord: a write-time rule refused it; nothing was written.
    """
    rules.check_kind(kind)
    rules.check_text(text)
    symptoms = rules.clean_symptoms(symptoms)
    resolved = [evidence_mod.resolve(hive.project, spec, conn=conn, me=hive.me) for spec in evidence]
    rules.check_evidence(resolved)
    hearsay = rules.check_quote(kind, quote, resolved)
    where = place(hive, conn, scope, sealed)
    items = [r.item for r in resolved]
    catch_up(hive, conn)
    lesson = model.lesson_id(hive.me, where.scope, kind, text, applicability, quote, items, symptoms)
    if conn.execute("SELECT 1 FROM lessons WHERE id = ?", (lesson,)).fetchone():
        return Proposed(lesson, False, scope, where.audience, hearsay)
    body = model.body(text, applicability, quote, symptoms)
    digest = model.body_hash(lesson, body)
    header: dict[str, Any] = {"type": "lesson", "id": lesson, "kind": kind, "evidence": items,
                              "tags": sorted(set(tags or [])), "body_hash": digest, "hearsay": hearsay}
    if supersedes:
        header["supersedes"] = supersedes
    if session:
        header["session"] = session
    writing.write(hive, conn, where, header, {digest: model.body_bytes(body)})  # the body first
    return Proposed(lesson, True, scope, where.audience, hearsay)
