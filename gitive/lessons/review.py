"""Writing a review: a person's signed approval or rejection, with an optional edit of the text."""

from __future__ import annotations

import sqlite3
from typing import Any, NamedTuple

from gitive.errors import GitiveError
from gitive.index.refresh import catch_up
from gitive.lessons import catalog, model, rules
from gitive.lessons.placement import my_person, place_like
from gitive.store import bodies, logs
from gitive.team.hive import Hive


class Reviewed(NamedTuple):
    lesson: str
    approved: bool
    edited: bool


def review(hive: Hive, conn: sqlite3.Connection, lesson: str, *, approved: bool, note: str = "",
           text: str | None = None) -> Reviewed:
    """Sign a review of ``lesson`` as this machine's person. The caller has checked a person is present.

    Raises:
        GitiveError: the lesson is retracted, superseded, or the edit breaks a write-time rule.
    """
    catch_up(hive, conn)
    found = catalog.get(conn, lesson)
    if found["state"] in ("retracted", "superseded"):
        raise GitiveError(f"lesson {lesson[:12]} is {found['state']}; there is nothing to review")
    person = my_person(hive, conn)
    where = place_like(hive, conn, found["scope"], found["project"] or "")
    record: dict[str, Any] = {"type": "review", "about": lesson, "approver": person, "approved": approved,
                              "note": note, "scope": where.scope}
    edited = False
    if text is not None and text != found["text"]:
        if not approved:
            raise GitiveError("an edit only makes sense with an approval; reject without --text")
        rules.check_text(text)
        edited_body = model.body(text, found["applicability"] or "", found["quote"])
        digest = model.body_hash(lesson, edited_body)
        bodies.put(where.repo, hive.key, hive.team_id, digest, model.body_bytes(edited_body))
        record["edits"] = digest
        edited = True
    logs.append(where.repo, hive.key, hive.team_id, where.log, where.scope, record)
    return Reviewed(lesson, approved, edited)
