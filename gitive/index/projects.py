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
    SELECT p.person, p.role, p.confirmed, p.signer, p.decides, p.exempt, COALESCE(d.decided_at, p.at) AS t,
           p.author
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
    author: str


def _rows(conn: sqlite3.Connection, project: str) -> list[Row]:
    return [Row(*r) for r in conn.execute(_ROWS, (project,)).fetchall()]


def granters(conn: sqlite3.Connection) -> dict[str, int | None]:
    """Persons whose grants count as an admin's -> until when: current admins (None: no end), and former admins
    until their demotion (the time of the roster record that made them a member, signed by whoever demoted
    them). A grant a demoted admin makes afterwards counts for nothing (issue 23)."""
    out: dict[str, int | None] = {}
    for person, current in conn.execute("SELECT person, current FROM admins").fetchall():
        if current:
            out[person] = None
        else:
            row = conn.execute("SELECT MAX(ts) FROM members WHERE person = ?", (person,)).fetchone()
            out[person] = row[0] if row and row[0] is not None else 0
    return out


def _by_admin(r: Row, admins: dict[str, int | None]) -> bool:
    """Whether ``r`` was granted by someone who was an admin when they granted it (by its signed time)."""
    if r.signer not in admins:
        return False
    until = admins[r.signer]
    return until is None or r.at < until


def admitted_at(conn: sqlite3.Connection, machine: str) -> int | None:
    """When ``machine`` was admitted: the time of the first member record about it in its own roster log (by
    position, so a later entry dated earlier moves nothing). None: no such record (admitted by someone else)."""
    row = conn.execute("SELECT at FROM entries WHERE author = ? AND log = 'roster' AND kind = 'member' "
                       "AND json_extract(envelope, '$.body.record.machine') = ? ORDER BY seq LIMIT 1",
                       (machine, machine)).fetchone()
    return row[0] if row else None


def _self_claims(conn: sqlite3.Connection, rows: list[Row]) -> list[Row]:
    """The v1 rule's self-claims of ownership, without those dated before their writer's admission: a member
    of a team not yet migrated could otherwise backdate a claim and win the earliest-claim rule (issue 23)."""
    out = []
    for r in rows:
        if r.exempt and r.role == "owner":
            since = admitted_at(conn, r.author)
            if since is None or r.at >= since:
                out.append(r)
    return out


def _owners(conn: sqlite3.Connection, rows: list[Row], admins: dict[str, int | None]) -> set[str]:
    owners: set[str] = set()
    for r in _self_claims(conn, rows):  # the v1 rule, for records below the migration point only
        if r.signer in owners or (not owners and r.signer == r.person):
            owners.add(r.person)
    grants = [r for r in rows if r.role == "owner" and (r.decides or r.exempt)]
    grown = True
    while grown:  # owners granted by admins, then by owners they made: independent of record order
        grown = False
        for r in grants:
            if r.person not in owners and (_by_admin(r, admins) or r.signer in owners):
                owners.add(r.person)
                grown = True
    return owners


def people(conn: sqlite3.Connection, project: str) -> dict[str, dict[str, object]]:
    """Everyone with a record for ``project``: person -> {role, confirmed, proposed_at}."""
    rows = _rows(conn, project)
    admins = granters(conn)
    owners = _owners(conn, rows, admins)
    out: dict[str, dict[str, object]] = {}
    for r in rows:
        entry = out.setdefault(r.person, {"role": "member", "confirmed": False, "proposed_at": r.at})
        if r.person in owners:
            entry.update(role="owner", confirmed=True)
        elif r.confirmed and (r.decides or r.exempt) and (r.signer in owners or _by_admin(r, admins)):
            entry["confirmed"] = True
    return out


def confirmed(conn: sqlite3.Connection, project: str) -> set[str] | None:
    """Confirmed persons of ``project``, whose reviews of its lessons count.

    Empty while the project has no owner: nobody's review counts until an admin grants one (issue 23). Before,
    a project without records counted everyone's review, so a request to join (which needs no gesture) could
    turn its verified lessons back to proposed, and a repository whose remote moved counted every member.
    """
    found = people(conn, project)
    if not any(v["role"] == "owner" for v in found.values()):
        return set()
    return {p for p, v in found.items() if v["confirmed"]}


def owners(conn: sqlite3.Connection, project: str) -> set[str]:
    return {p for p, v in people(conn, project).items() if v["role"] == "owner"}


def who_confirms(conn: sqlite3.Connection, project: str) -> list[str]:
    """The persons who can confirm a member of ``project`` now: its owners and the team's current admins."""
    current = {r[0] for r in conn.execute("SELECT person FROM admins WHERE current = 1")}
    return sorted(owners(conn, project) | current)
