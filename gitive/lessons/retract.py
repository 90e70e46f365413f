"""Retraction: a signed tombstone that makes every reader drop a lesson's bodies and refuse them later."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, NamedTuple

from gitive.errors import GitiveError
from gitive.index import deciding
from gitive.index.bodies import drop_own_bodies
from gitive.index.catchup import catch_up
from gitive.index.lesson_state import may_retract
from gitive.lessons import catalog, writing
from gitive.lessons.placement import place_like
from gitive.team.hive import Hive

if TYPE_CHECKING:
    from gitive.core.personkey import Signer

NOT_ERASED = ("Copies a person saved outside gitive, and objects a git host keeps until its own garbage "
              "collection, are not erased.")


class Retracted(NamedTuple):
    lesson: str
    dropped_here: int


def retract(hive: Hive, conn: sqlite3.Connection, lesson: str, reason: str, signer: Signer | None = None
            ) -> Retracted:
    """Write a tombstone for ``lesson`` (author, reviewer or project owner only) and drop our own copies.

    Raises:
        GitiveError: no reason given, already retracted, or this person may not retract it.
    """
    if not reason.strip():
        raise GitiveError("say why with --reason; it is kept with the tombstone")
    catch_up(hive, conn)
    found = catalog.get(conn, lesson)
    if found["state"] == "retracted":
        raise GitiveError(f"lesson {lesson[:12]} is already retracted")
    check_allowed(hive, conn, lesson, signer)
    hashes = sorted({found["body_hash"], *[r[0] for r in conn.execute(
        "SELECT edits FROM reviews WHERE about = ? AND edits IS NOT NULL", (lesson,))]})
    where = place_like(hive, conn, found["scope"], found["project"] or "", lesson)
    record = {"type": "tombstone", "lesson": lesson, "reason": reason, "bodies": hashes}
    writing.write(hive, conn, where, deciding.signed(hive.team_id, hive.me, record, signer, conn))
    dropped = drop_own_bodies(hive.stores(), hive.key, hive.team_id, hive.me, hashes, conn)
    catch_up(hive, conn)  # this machine's index forgets the text now, not at the next command
    return Retracted(lesson, dropped)


def check_allowed(hive: Hive, conn: sqlite3.Connection, lesson: str, signer: Signer | None = None,
                  *, key_known: bool = True) -> None:
    """Refuse early (before asking for confirmation) when this person may not retract ``lesson``, or the
    tombstone would not count.

    Raises:
        NotAllowed: a removed or anchor machine, or no registered person key (when ``key_known``).
        GitiveError: not the author, a reviewer with authority, or the project's owner.
    """
    deciding.decider(conn, hive.me, signer, key_known=key_known)
    if not may_retract(conn, hive.me, lesson):
        raise GitiveError("only the lesson's author, a reviewer of it, or the project's owner may retract it")
