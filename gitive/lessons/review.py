"""Writing a review: a person's signed approval or rejection, with an optional edit of the text."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any, NamedTuple

from gitive.errors import GitiveError, NotAllowed
from gitive.index import deciding
from gitive.index import projects as project_index
from gitive.index.catchup import catch_up
from gitive.lessons import catalog, model, rules, writing
from gitive.lessons.placement import place_like
from gitive.team.hive import Hive

if TYPE_CHECKING:
    from gitive.core.personkey import Signer


class Reviewed(NamedTuple):
    lesson: str
    approved: bool
    edited: bool


def check_counts(hive: Hive, conn: sqlite3.Connection, found: dict[str, Any], signer: Signer | None,
                 *, key_known: bool = True) -> str:
    """Refuse up front a review that readers would not count, saying why and who can fix it; return the person.

    Without ``key_known`` (before the passphrase is asked), everything but the key is checked.

    Raises:
        GitiveError: the lesson is retracted or superseded.
        NotAllowed: removed or anchor machine, no (registered) person key, or for a project lesson, not a
            confirmed member of the project.
    """
    if found["state"] in ("retracted", "superseded"):
        raise GitiveError(f"lesson {found['id'][:12]} is {found['state']}; there is nothing to review")
    person = deciding.decider(conn, hive.me, signer, key_known=key_known)
    if found["scope"] == "project" and found["project"]:
        allowed = project_index.confirmed(conn, found["project"])
        if allowed is not None and person not in allowed:
            who = project_index.who_confirms(conn, found["project"])
            by = " or ".join(who) if who else "an admin"
            if not project_index.owners(conn, found["project"]):
                raise NotAllowed(f"your review would not count: this project has no owner yet; {by} can grant "
                                 f"one with `gitive project confirm --owner PERSON`")
            raise NotAllowed(f"your review would not count: you are not a confirmed member of this project; "
                             f"{by} can fix that with `gitive project confirm {person}`")
    return person


def review(hive: Hive, conn: sqlite3.Connection, lesson: str, *, approved: bool, note: str = "",
           text: str | None = None, signer: Signer | None = None) -> Reviewed:
    """Sign a review of ``lesson`` as this machine's person, with the gesture of ``signer`` (their unlocked
    person key). The caller has checked a person is present.

    Raises:
        GitiveError: the lesson is retracted, superseded, or the edit breaks a write-time rule.
        NotAllowed: the review would not count (:func:`check_counts`).
    """
    catch_up(hive, conn)
    found = catalog.get(conn, lesson)
    person = check_counts(hive, conn, found, signer)
    where = place_like(hive, conn, found["scope"], found["project"] or "", lesson)
    record: dict[str, Any] = {"type": "review", "about": lesson, "approver": person, "approved": approved,
                              "note": note, "scope": where.scope}
    edited = False
    items: dict[str, bytes] = {}
    if text is not None and text != found["text"]:
        if not approved:
            raise GitiveError("an edit only makes sense with an approval; reject without --text")
        rules.check_text(text)
        edited_body = model.body(text, found["applicability"] or "", found["quote"])
        digest = model.body_hash(lesson, edited_body)
        items[digest] = model.body_bytes(edited_body)
        record["edits"] = digest
        edited = True
    writing.write(hive, conn, where, deciding.signed(hive.team_id, hive.me, record, signer, conn), items)
    return Reviewed(lesson, approved, edited)
