"""Who belongs to a project, from signed ``project-member`` records (docs/verification.md §3, Projects).

Ownership is granted by an admin or an existing owner of the project, with their gesture; it is never claimed
by a timestamp. A member counts once an owner or an admin confirmed them. Only records the roster admits at
their position count, and an anchor machine grants nothing. In a v1 team, records at or below the migration
point keep the old rule (the earliest self-declared owner of a project without one), so a team reads the
same before and after it migrates. Membership decides routing and review authority; it is not a read barrier.
"""

from __future__ import annotations

import sqlite3
from typing import NamedTuple

# A grant's time is the one signed under its gesture (gitive/core/decisions.py), never the time a copy claims.
_ROWS = """
    SELECT p.person, p.role, p.confirmed, p.signer, p.decides, p.exempt, COALESCE(d.decided_at, p.at) AS t
    FROM valid_project_members p
    LEFT JOIN decisions d ON d.author = p.author AND d.log = p.log AND d.seq = p.seq
    WHERE p.project = ?
    ORDER BY t, p.author, p.seq
"""


class Row(NamedTuple):
    person: str
    role: str
    confirmed: int
    signer: str
    decides: int  # by a non-anchor machine, with a gesture by the signer's registered person key
    exempt: int  # at or below the migration point: no gesture needed
    at: int


def _rows(conn: sqlite3.Connection, project: str) -> list[Row]:
    return [Row(*r) for r in conn.execute(_ROWS, (project,)).fetchall()]


def granters(conn: sqlite3.Connection) -> set[str]:
    """Persons whose grants count as an admin's: admins now, and admins whose grants were made while they were."""
    return {r[0] for r in conn.execute("SELECT person FROM admins")}


def _owners(rows: list[Row], admins: set[str]) -> set[str]:
    owners: set[str] = set()
    for r in rows:  # the v1 rule, for records below the migration point only
        if r.exempt and r.role == "owner" and (r.signer in owners or (not owners and r.signer == r.person)):
            owners.add(r.person)
    grants = [r for r in rows if r.role == "owner" and (r.decides or r.exempt)]
    grown = True
    while grown:  # owners granted by admins, then by owners they made: independent of record order
        grown = False
        for r in grants:
            if r.person not in owners and (r.signer in admins or r.signer in owners):
                owners.add(r.person)
                grown = True
    return owners


def people(conn: sqlite3.Connection, project: str) -> dict[str, dict[str, object]]:
    """Everyone with a record for ``project``: person -> {role, confirmed, proposed_at}."""
    rows = _rows(conn, project)
    admins = granters(conn)
    owners = _owners(rows, admins)
    out: dict[str, dict[str, object]] = {}
    for r in rows:
        entry = out.setdefault(r.person, {"role": "member", "confirmed": False, "proposed_at": r.at})
        if r.person in owners:
            entry.update(role="owner", confirmed=True)
        elif r.confirmed and (r.decides or r.exempt) and (r.signer in owners or r.signer in admins):
            entry["confirmed"] = True
    return out


def confirmed(conn: sqlite3.Connection, project: str) -> set[str] | None:
    """Confirmed persons of ``project``; None when the project has no membership records at all."""
    found = people(conn, project)
    if not found:
        return None
    return {p for p, v in found.items() if v["confirmed"]}


def owners(conn: sqlite3.Connection, project: str) -> set[str]:
    return {p for p, v in people(conn, project).items() if v["role"] == "owner"}


def who_confirms(conn: sqlite3.Connection, project: str) -> list[str]:
    """The persons who can confirm a member of ``project`` now: its owners and the team's current admins."""
    current = {r[0] for r in conn.execute("SELECT person FROM admins WHERE current = 1")}
    return sorted(owners(conn, project) | current)
