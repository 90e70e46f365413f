"""Person decisions of the gate: preferences (``prefs``) and going live (``gate-live``).

Both are a person's own records and count only as that person's decision: written by one of the person's own
(non-anchor, admitted) machines and carrying the person's *gesture*, a signature by a key registered for them
(docs/verification.md §3), which an agent with a shell cannot make: it has the machine key, not the passphrase.
Below a v1 team's migration point no gesture is needed, as for every other decision. The writer adds the
gesture in :func:`signed`; every reader asks :func:`person_records`, so both rules live here.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from gitive.index.queries import VERIFIED

if TYPE_CHECKING:
    from gitive.core.personkey import Signer
    from gitive.team.hive import Hive

KINDS = ("prefs", "gate-live")


def signed(hive: Hive, record: dict[str, Any], signer: Signer | None) -> dict[str, Any]:
    """``record`` as the person's decision is written: with the gesture of ``signer`` (the unlocked person
    key); unchanged without one (a v1 team not yet migrated, where no decision needs a gesture)."""
    from gitive.index.deciding import signed as gestured

    return gestured(hive.team_id, hive.me, record, signer)


def person_records(conn: sqlite3.Connection, kind: str, team_id: str | None = None
                   ) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """``(author machine, its person, record)`` of every verified ``kind`` record that counts as its
    person's decision, oldest first: not by an anchor, about the author's own person, with a valid gesture."""
    from gitive.index.deciding import counts_as_decision  # PyNaCl loads only where a record is judged

    sql = VERIFIED.replace("SELECT e.author,", "SELECT m.role, e.author,", 1) + " AND e.kind = ? ORDER BY e.at, e.seq"
    for row in conn.execute(sql, (kind,)):
        role, author, log, seq, person, envelope = row[0], row[1], row[2], row[3], row[8], row[7]
        record = json.loads(envelope)["body"]["record"]
        if role != "anchor" and record.get("person") == person and record.get("actor") == "person" \
                and counts_as_decision(conn, author, log, seq, person, record, team_id):
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


def write(hive: Hive, record: dict[str, Any], signer: Signer | None) -> dict[str, Any]:
    """Sign and append a person's gate decision to this machine's team log; the record as written."""
    from gitive.core.records import TEAM_SCOPE
    from gitive.store import logs

    done = signed(hive, record, signer)
    logs.append(hive.store, hive.key, hive.team_id, "team", TEAM_SCOPE, done, at=record["ts"])
    return done
