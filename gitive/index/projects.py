"""Who belongs to a project, from signed ``project-member`` records.

An owner is either confirmed by an existing owner, or, while a project has none, the earliest member who
claimed it (the person who first set gitive up in that repository). A member counts once an owner confirmed
them. Membership decides routing and review authority; it is not a read barrier.
"""

from __future__ import annotations

import sqlite3

_ROWS = """
    SELECT p.person, p.role, p.confirmed, m.person AS signer, p.at
    FROM project_members p JOIN members m ON m.machine = p.author
    WHERE p.project = ? AND (m.active = 1 OR p.at < m.ts)
    ORDER BY p.at, p.author, p.seq
"""


def people(conn: sqlite3.Connection, project: str) -> dict[str, dict[str, object]]:
    """Everyone with a record for ``project``: person -> {role, confirmed, proposed_at}."""
    rows = conn.execute(_ROWS, (project,)).fetchall()
    owners: set[str] = set()
    for person, role, _confirmed, signer, _ in rows:
        if role == "owner" and (signer in owners or (not owners and signer == person)):
            owners.add(person)
    out: dict[str, dict[str, object]] = {}
    for person, _role, confirmed, signer, at in rows:
        entry = out.setdefault(person, {"role": "member", "confirmed": False, "proposed_at": at})
        if person in owners:
            entry.update(role="owner", confirmed=True)
        elif confirmed and signer in owners:
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
