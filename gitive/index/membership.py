"""Project membership records: proposed when a member first works in a repository, granted by an owner or admin."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from gitive.core.records import TEAM_SCOPE
from gitive.errors import GitiveError, NotAllowed
from gitive.index import deciding
from gitive.index import projects as project_index
from gitive.index.catchup import catch_up
from gitive.store import logs
from gitive.team import projects
from gitive.team.hive import Hive

if TYPE_CHECKING:
    from gitive.core.personkey import Signer


def my_person(hive: Hive, conn: sqlite3.Connection) -> str:
    return deciding.me_as_member(conn, hive.me)[0]


def ensure_member(hive: Hive, conn: sqlite3.Connection, signer: Signer | None = None) -> str | None:
    """Propose this person's membership of the current project once.

    An admin with an unlocked key (the founder at ``init``) of a project nobody owns yet grants themselves
    ownership; anyone else asks to be a member, which an owner or an admin confirms.

    Returns the role written, or None when a record already exists.
    """
    project = hive.project_id
    person = my_person(hive, conn)
    people = project_index.people(conn, project)
    if person in people:
        return None
    grant = signer is not None and deciding.is_admin(conn, person) and not project_index.owners(conn, project)
    record = {"type": "project-member", "project": project, "person": person,
              "role": "owner" if grant else "member", "confirmed": grant}
    if grant:
        deciding.decider(conn, hive.me, signer)
        record = deciding.signed(hive.team_id, hive.me, record, signer, conn)
    logs.append(hive.store, hive.key, hive.team_id, "roster", TEAM_SCOPE, record)
    catch_up(hive, conn)
    return str(record["role"])


def confirm(hive: Hive, conn: sqlite3.Connection, person: str, owner: bool = False,
            signer: Signer | None = None) -> None:
    """An owner of the current project, or an admin, confirms ``person`` as a member (or owner) of it.

    Raises:
        NotAllowed: this person is neither an owner of the project nor an admin.
        GitiveError: ``person`` is not an active member of the team.
    """
    catch_up(hive, conn)
    project = hive.project_id
    me = deciding.decider(conn, hive.me, signer)
    if me not in project_index.owners(conn, project) and not deciding.is_admin(conn, me):
        who = ", ".join(project_index.who_confirms(conn, project)) or "an admin"
        raise NotAllowed(f"only an owner of {projects.project_label(hive.project)} or an admin may confirm "
                         f"members; ask {who}")
    if not conn.execute("SELECT 1 FROM members WHERE person = ? AND active = 1", (person,)).fetchone():
        raise GitiveError(f"{person!r} is not an active member of the team; see `gitive team`")
    record = {"type": "project-member", "project": project, "person": person,
              "role": "owner" if owner else "member", "confirmed": True}
    logs.append(hive.store, hive.key, hive.team_id, "roster", TEAM_SCOPE,
                deciding.signed(hive.team_id, hive.me, record, signer, conn))
    catch_up(hive, conn)
