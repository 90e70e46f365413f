"""Person decisions of the gate: preferences (``prefs``) and going live (``gate-live``).

Both are a person's own records and count only as a person's decision: written by one of that person's own
(non-anchor) machines, at a terminal (``actor: "person"``), and carrying the person's *gesture* (a signature by
the person key, which an agent cannot unlock; docs/verification.md §3) once the team requires gestures. The
writer adds the gesture in :func:`signed`; every reader asks :func:`person_records`, so both rules live here.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gitive.index.queries import VERIFIED

if TYPE_CHECKING:
    from gitive.team.hive import Hive

KINDS = ("prefs", "gate-live")


def signed(hive: Hive, record: dict[str, Any], signer: Any | None) -> dict[str, Any]:
    """``record`` as the person's decision is written: with the gesture of ``signer`` (the unlocked person key)
    when there is one. Until person keys exist in this code base there is none, and the CLI's terminal check
    (:func:`gitive.lessons.gate.require_person`) is the person's only proof."""
    del hive, signer
    return record


def counts(team_id: str | None, author: str, record: dict[str, Any], role: str) -> bool:
    """Whether a stored ``prefs`` / ``gate-live`` record counts as its person's decision."""
    del team_id, author
    return role != "anchor" and record.get("actor") == "person"


def person_records(conn: sqlite3.Connection, kind: str, team_id: str | None = None
                   ) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """``(author machine, its person, record)`` of every verified ``kind`` record that counts, oldest first."""
    sql = VERIFIED.replace("SELECT e.author,", "SELECT m.role, e.author,", 1) + " AND e.kind = ? ORDER BY e.at, e.seq"
    for row in conn.execute(sql, (kind,)):
        role, author, person, envelope = row[0], row[1], row[8], row[7]
        record = json.loads(envelope)["body"]["record"]
        if counts(team_id, author, record, role):
            yield author, person, record


def live_people(conn: sqlite3.Connection, team_id: str | None = None) -> dict[str, tuple[bool, int]]:
    """person -> (live, since): each person's newest counting ``gate-live`` record. Absent: shadow."""
    out: dict[str, tuple[bool, int]] = {}
    for _, person, record in person_records(conn, "gate-live", team_id):
        if record.get("person") == person and isinstance(record.get("ts"), int) \
                and record["ts"] >= out.get(person, (False, -1))[1]:
            out[person] = (bool(record.get("live")), record["ts"])
    return out


def person_here(conn: sqlite3.Connection, me: str) -> str:
    """This machine's person, who alone may set its gate.

    Raises:
        GitiveError: this machine is an anchor, removed, or not on the roster.
    """
    from gitive.errors import GitiveError

    row = conn.execute("SELECT person, role, active FROM members WHERE machine = ?", (me,)).fetchone()
    if row is None or not row[2]:
        raise GitiveError("this machine is not an active member of the team; ask a member for an invite")
    if row[1] == "anchor":
        raise GitiveError("an anchor machine makes no decisions; a person sets their gate on their own machine")
    return str(row[0])


def write(hive: Hive, record: dict[str, Any], signer: Any | None) -> dict[str, Any]:
    """Sign and append a person's gate decision to this machine's team log; the record as written."""
    from gitive.core.records import TEAM_SCOPE
    from gitive.store import logs

    done = signed(hive, record, signer)
    logs.append(hive.store, hive.key, hive.team_id, "team", TEAM_SCOPE, done, at=record["ts"])
    return done
