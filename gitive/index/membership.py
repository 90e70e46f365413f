"""Project membership records: proposed when a member first works in a repository, confirmed by an owner."""

from __future__ import annotations

import sqlite3

from gitive.core.records import TEAM_SCOPE
from gitive.errors import GitiveError
from gitive.index import projects as project_index
from gitive.index.refresh import catch_up
from gitive.store import logs
from gitive.team import projects
from gitive.team.hive import Hive


def my_person(hive: Hive, conn: sqlite3.Connection) -> str:
    row = conn.execute("SELECT person FROM members WHERE machine = ? AND active = 1", (hive.me,)).fetchone()
    if row is None:
        raise GitiveError("this machine is not an active member of the team; see `gitive team`")
    return row[0]


def ensure_member(hive: Hive, conn: sqlite3.Connection) -> str | None:
    """Propose this person's membership of the current project once (an owner claim if it has no one yet).

    Returns the role proposed, or None when a record already exists.
    """
    project = projects.project_id(hive.project)
    person = my_person(hive, conn)
    if person in project_index.people(conn, project):
        return None
    role = "owner" if not project_index.people(conn, project) else "member"
    logs.append(hive.store, hive.key, hive.team_id, "roster", TEAM_SCOPE,
                {"type": "project-member", "project": project, "person": person, "role": role,
                 "confirmed": role == "owner"})
    catch_up(hive, conn)
    return role


def confirm(hive: Hive, conn: sqlite3.Connection, person: str, owner: bool = False) -> None:
    """An owner confirms ``person`` as a member (or owner) of the current project.

    Raises:
        GitiveError: this person is not an owner, or ``person`` is not on the roster.
    """
    catch_up(hive, conn)
    project = projects.project_id(hive.project)
    me = my_person(hive, conn)
    if me not in project_index.owners(conn, project):
        raise GitiveError(f"only an owner of {projects.project_label(hive.project)} may confirm members")
    if not conn.execute("SELECT 1 FROM members WHERE person = ? AND active = 1", (person,)).fetchone():
        raise GitiveError(f"{person!r} is not an active member of the team; see `gitive team`")
    logs.append(hive.store, hive.key, hive.team_id, "roster", TEAM_SCOPE,
                {"type": "project-member", "project": project, "person": person,
                 "role": "owner" if owner else "member", "confirmed": True})
