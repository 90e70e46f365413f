"""Before a person's decision is written: will it count? And what every command tells a person about standing.

Readers refuse a decision without a valid gesture by the right person's registered key, or by a removed or
anchor machine (docs/verification.md §3). These checks say so before anything is written, with what to do.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from gitive.core import decisions, gesture
from gitive.core.clock import now_ms
from gitive.errors import NotAllowed, NoTeam
from gitive.index.db import TEAM_META, meta_get
from gitive.team.hive import REMOVED  # one wording for the notice and every refusal

if TYPE_CHECKING:
    from gitive.core.personkey import Signer

__all__ = ["REMOVED", "NotAllowed", "decider", "notices", "signed"]


def gestures_required(conn: sqlite3.Connection) -> bool:
    """Whether a decision written now needs a gesture (a v2 team, or a v1 team past its migration)."""
    return conn.execute("SELECT 1 FROM gesture_exempt WHERE machine = '*'").fetchone() is None


def registered_keys(conn: sqlite3.Connection, person: str) -> list[str]:
    return [r[0] for r in conn.execute("SELECT key FROM person_keys WHERE person = ? ORDER BY key", (person,))]


def counts_as_decision(conn: sqlite3.Connection, author: str, log: str, seq: int, person: str,
                       record: dict[str, Any], team_id: str | None = None) -> bool:
    """Whether a stored record decides for ``person`` (its author machine's person): its gesture is by a key
    registered for that person, or it lies at or below the migration point. The roster (author admitted, not an
    anchor) is the caller's to check, as the ``valid_*`` views do."""
    exempt = conn.execute("SELECT 1 FROM gesture_exempt WHERE (machine = '*' OR (machine = ? AND log = ?)) "
                          "AND ? <= seq", (author, log, seq)).fetchone()
    if exempt is not None:
        return True
    if team_id is None:
        team_id = meta_get(conn, TEAM_META)
    key = gesture.key_of(team_id, author, record) if team_id else None
    return key is not None and key in registered_keys(conn, person)


def admins(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT person FROM admins WHERE current = 1 ORDER BY person")]


def is_admin(conn: sqlite3.Connection, person: str) -> bool:
    return person in admins(conn)


def removed(conn: sqlite3.Connection, me: str) -> bool:
    """Whether the roster this index holds shows this machine removed."""
    row = conn.execute("SELECT active FROM members WHERE machine = ?", (me,)).fetchone()
    return row is not None and not row[0]


def me_as_member(conn: sqlite3.Connection, me: str) -> tuple[str, str]:
    """(person, role) of this machine.

    Raises:
        NoTeam: this machine is not on the roster, or was removed.
    """
    row = conn.execute("SELECT person, role, active FROM members WHERE machine = ?", (me,)).fetchone()
    if row is None:
        raise NoTeam("this machine is not an active member of the team; ask a member for an invite")
    if not row[2]:
        raise NoTeam(REMOVED)
    return row[0], row[1]


def decider(conn: sqlite3.Connection, me: str, signer: Signer | None, *, key_known: bool = True) -> str:
    """The person deciding on this machine, once it is sure the decision will count; else refuse.

    Without ``key_known`` (before the passphrase is asked), everything but the key is checked.

    Raises:
        NoTeam: removed or not a member.
        NotAllowed: an anchor machine, no person key where one is needed, or not the registered one.
    """
    person, role = me_as_member(conn, me)
    if role == "anchor":
        raise NotAllowed("an anchor machine makes no decisions; a person decides on their own machine")
    if not key_known:
        return person
    registered = registered_keys(conn, person)
    if signer is None:
        if gestures_required(conn):
            raise NotAllowed("this decision needs your person key: create it with `gitive person init` (or "
                             "`gitive person import` the one from your other machine)")
        return person
    if registered and signer.public not in registered:
        raise NotAllowed(f"your person key {signer.public[:12]}… is not the one registered for {person} "
                         f"({registered[0][:12]}…): import that key (`gitive person import`), or register this "
                         "one with an endorsement (`gitive person register --endorse-with FILE`)")
    if not registered and gestures_required(conn):
        raise NotAllowed(f"no person key is registered for {person} in this team: run `gitive person register`")
    return person


def signed(team_id: str, me: str, record: dict[str, Any], signer: Signer | None,
           conn: sqlite3.Connection | None = None) -> dict[str, Any]:
    """``record`` with this person's gesture (unchanged when there is no key and none is needed).

    With ``conn`` (the writer's caught-up index), a decision kind is first stamped with its own time and this
    person's next sequence on its subject, so the stamp is under the gesture (gitive/core/decisions.py).
    """
    if signer is None:
        return record
    if conn is not None:
        record = stamped(conn, me, record)
    return gesture.sign(signer, team_id, me, record)


def stamped(conn: sqlite3.Connection, me: str, record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with ``decided``: now, and one more than the highest sequence this index knows of this
    person's decisions on the same subject (a record that decides nothing is returned unchanged)."""
    from gitive.index import decisions as decision_rows

    subject = decisions.subject(record)
    row = conn.execute("SELECT person FROM members WHERE machine = ?", (me,)).fetchone()
    if subject is None or row is None:
        return record
    n = decisions.next_n(decision_rows.highest(conn, subject, row[0]))
    return decisions.stamp(record, now_ms(), n)


def notices(conn: sqlite3.Connection, me: str, local_key: str | None) -> list[str]:
    """One line each: what this person should know about their standing before they do anything else."""
    row = conn.execute("SELECT person, active, role FROM members WHERE machine = ?", (me,)).fetchone()
    if row is None:
        return []
    person, active, role = row
    if not active:
        return [REMOVED]
    if role == "anchor":
        return []  # the anchor decides nothing: it has no person key to make
    registered = registered_keys(conn, person)
    if local_key and registered and local_key not in registered:
        return [f"the person key registered for {person} ({registered[0][:12]}…) is not the one in this home "
                f"({local_key[:12]}…): import yours with `gitive person import`"]
    if gestures_required(conn):
        return [] if local_key else ["decisions need your person key here: `gitive person import` the one "
                                     "from your other machine, or `gitive person init`"]
    if not local_key:
        return ["this team predates person keys: create yours with `gitive person init`; then an admin runs "
                "`gitive team migrate`"]
    if not registered:
        return ["your person key is not registered in this team yet: run `gitive person register`"]
    if person in admins(conn):
        return ["this team predates person keys: once everyone has one (`gitive team` shows who), run "
                "`gitive team migrate`"]
    return []
