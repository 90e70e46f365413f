"""Roster decisions beyond invite and remove: roles, registering a person key, migrating a v1 team.

Each is checked against the fetched roster before it is signed (``index.deciding``), carries the person's
gesture, and is written to this machine's roster log.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any

from gitive.core import roles
from gitive.core.records import TEAM_SCOPE
from gitive.enrolment import ops
from gitive.errors import GitiveError, NotAllowed
from gitive.index import deciding, queries
from gitive.index.catchup import catch_up
from gitive.index.roster import heads_of
from gitive.store import logs
from gitive.team.hive import Hive

if TYPE_CHECKING:
    from gitive.core.personkey import Signer


def set_role(hive: Hive, conn: sqlite3.Connection, person: str, role: str, signer: Signer | None
             ) -> list[dict[str, Any]]:
    """Give every active machine of ``person`` the role ``admin`` or ``member`` (admins only).

    Raises:
        NotAllowed: not an admin, or the change would leave no admin.
        GitiveError: an unknown role or person.
    """
    if role not in (roles.ADMIN, roles.MEMBER):
        raise GitiveError(f"unknown role {role!r}: use admin or member (an anchor joins with its own invite)")
    me = deciding.decider(conn, hive.me, signer)
    if not deciding.is_admin(conn, me):
        raise NotAllowed(f"only an admin changes roles; ask {' or '.join(deciding.admins(conn)) or 'an admin'}")
    active = [m for m in queries.members(conn) if m["active"]]
    chosen = [m for m in active if m["person"] == person and m["role"] != roles.ANCHOR]
    if not chosen:
        raise GitiveError(f"{person!r} has no active machine in the team; see `gitive team`")
    if role == roles.MEMBER and set(deciding.admins(conn)) == {person}:
        raise NotAllowed(f"{person} is the last admin: make someone else an admin first")
    changed = [m for m in chosen if m["role"] != role]
    for m in changed:
        record = ops.member_record(m["machine"], m["person"], m["name"], m["emails"], None, role=role)
        logs.append(hive.store, hive.key, hive.team_id, "roster", TEAM_SCOPE,
                    deciding.signed(hive.team_id, hive.me, record, signer))
    return changed


def register_key(hive: Hive, conn: sqlite3.Connection, signer: Signer, endorser: Signer | None = None) -> bool:
    """Register ``signer``'s key as this machine's person's key; False when it already is.

    Raises:
        NotAllowed: another key is registered and no (valid) endorsement was given.
    """
    person, role = deciding.me_as_member(conn, hive.me)
    if role == roles.ANCHOR:
        raise NotAllowed("an anchor machine has no person key")
    registered = deciding.registered_keys(conn, person)
    if signer.public in registered:
        return False
    if registered:
        allowed = set(registered) | {k for admin in deciding.admins(conn)
                                     for k in deciding.registered_keys(conn, admin)}
        if endorser is None or endorser.public not in allowed:
            raise NotAllowed(f"{person} already has a person key ({registered[0][:12]}…): a new one needs an "
                             "endorsement by it or by an admin's key (`--endorse-with FILE`); or import the "
                             "registered key with `gitive person import`")
    record = ops.person_key_record(hive.team_id, hive.me, person, signer, endorser)
    logs.append(hive.store, hive.key, hive.team_id, "roster", TEAM_SCOPE, record)
    catch_up(hive, conn)
    return True


def migrate(hive: Hive, conn: sqlite3.Connection, signer: Signer) -> dict[str, dict[str, int]]:
    """Switch a v1 team to required gestures; decisions at or below today's heads stay valid without one.

    Raises:
        NotAllowed: not an admin, or no registered person key.
        GitiveError: the team needs no migration.
    """
    if deciding.gestures_required(conn):
        raise GitiveError("this team already requires person keys for decisions; there is nothing to migrate")
    me = deciding.decider(conn, hive.me, signer)
    if not deciding.is_admin(conn, me):
        raise NotAllowed(f"only an admin migrates the team; ask {' or '.join(deciding.admins(conn)) or 'an admin'}")
    if signer.public not in deciding.registered_keys(conn, me):
        raise NotAllowed("register your person key first: `gitive person register`")
    heads = {m["machine"]: heads_of(conn, m["machine"]) for m in queries.members(conn)}
    heads[hive.me] = {**heads.get(hive.me, {}), "roster": ops._head_seq(hive.store, hive.me, "roster") + 1}
    record = {"type": "migration", "version": roles.TEAM_VERSION,
              "heads": {m: h for m, h in heads.items() if h}}
    logs.append(hive.store, hive.key, hive.team_id, "roster", TEAM_SCOPE,
                deciding.signed(hive.team_id, hive.me, record, signer))
    catch_up(hive, conn)
    return record["heads"]


def without_key(conn: sqlite3.Connection) -> list[str]:
    """Active persons with no registered person key (what an admin checks before migrating)."""
    persons = {m["person"] for m in queries.members(conn) if m["active"] and m["role"] != roles.ANCHOR}
    return sorted(p for p in persons if not deciding.registered_keys(conn, p))


def person_status() -> dict[str, Any]:
    """This home's person key, and whether the team of the current repository (if any) has it registered."""
    from gitive.core import personkey
    from gitive.errors import KeyFileError, NotARepository, NoTeam
    from gitive.index.refresh import fresh_index
    from gitive.team.hive import open_hive

    out: dict[str, Any] = {"key": None, "kind": None, "path": str(personkey.key_path()), "team": None,
                           "person": None, "registered": False}
    try:
        keyfile = personkey.load()
        out.update(key=keyfile.public, kind=keyfile.kind)
    except KeyFileError:
        return out
    try:
        hive = open_hive()
    except (NoTeam, NotARepository):
        return out
    with fresh_index(hive) as (conn, _):
        row = conn.execute("SELECT person FROM members WHERE machine = ?", (hive.me,)).fetchone()
        if row:
            out.update(team=hive.team_id, person=row[0],
                       registered=keyfile.public in deciding.registered_keys(conn, row[0]))
    return out


def register_here(signer: Signer, endorser: Signer | None = None, *, required: bool = False) -> str | None:
    """Register ``signer`` in the team of the current repository; say what happened (None: not in a team).

    Raises:
        NoTeam: ``required`` and the current repository belongs to no team.
    """
    from gitive.errors import NotARepository, NoTeam
    from gitive.index import sync as syncing
    from gitive.index.refresh import fresh_index
    from gitive.team.hive import open_hive

    try:
        hive = open_hive()
    except (NoTeam, NotARepository):
        if required:
            raise
        return None
    with fresh_index(hive) as (conn, _):
        done = register_key(hive, conn, signer, endorser)
    if not done:
        return "It is already registered in this team."
    report = syncing.run(hive)
    where = "shared" if report.ok else "written; run `gitive sync` to share it"
    return f"Registered it in team {hive.team_id} ({where})."


def gestures_required_here() -> bool:
    """Whether the team of the current repository requires gestures (False outside any team)."""
    from gitive.errors import NotARepository, NoTeam
    from gitive.index.refresh import fresh_index
    from gitive.team.hive import open_hive

    try:
        hive = open_hive()
    except (NoTeam, NotARepository):
        return False
    with fresh_index(hive) as (conn, _):
        return deciding.gestures_required(conn)
