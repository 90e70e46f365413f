"""``gitive join``: redeem an invite in a clone, so a new machine joins even while the inviter is offline."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from gitive.core import gesture, personkey
from gitive.core.keys import load_or_create_key, machine_id
from gitive.enrolment import anchors, ops
from gitive.errors import GitiveError, NotAllowed, NoTeam
from gitive.index import deciding, membership
from gitive.index import sync as syncing
from gitive.index.refresh import fresh_index
from gitive.store import logs
from gitive.store import repo as repos
from gitive.team import invites, registry
from gitive.team.hive import KEY_TEAM

if TYPE_CHECKING:
    from gitive.core.keys import SigningKey
    from gitive.core.personkey import Signer
    from gitive.team.hive import Hive


_ATTACH_INSTEAD = ("this machine is already a member of this team: run `gitive attach` here (or "
                   "`gitive join` without a code) to add this clone; no invite is needed")
_SECOND_MACHINE = ("{person} already has a person key: on {person}'s other machine run `gitive person export "
                   "FILE`, here `gitive person import FILE`, then join again")


def _check_key(conn: sqlite3.Connection, person: str, signer: Signer) -> None:
    """A machine joining as a person who has a registered key must bring that key."""
    registered = deciding.registered_keys(conn, person)
    if registered and signer.public not in registered:
        raise NotAllowed(_SECOND_MACHINE.format(person=person)
                         + f" (the registered key is {registered[0][:12]}…, this home's {signer.public[:12]}…)")


class Joined(NamedTuple):
    team_id: str
    machine: str
    person: str
    key_created: bool
    report: syncing.SyncReport


def join(path: Path | str | None, code_text: str, person: str | None, machine_name: str,
         team_remote: str | None = None, *, person_key: Callable[[], Signer]) -> Joined:
    """Fetch the team's roster, check the invite against it, then write and push this machine's join entry.

    ``person_key`` is called once the invite checks out: it returns the person key (new, or imported from the
    person's other machine) that gestures the join entry and is registered for ``person`` (a second
    machine's key must be the one already registered). The anchor has no person, so no person key: its
    admission rests on the admin's (gestured) anchor invite.

    Nothing is written (no config, no entry) when the code is bad, the invite is unknown, expired or used, or
    the remote cannot be reached. ``person`` may be None only for an anchor invite (the anchor's person name is
    reserved: ``anchor``).

    Raises:
        InviteError, RemoteError, GitiveError: with what is wrong and what to do.
    """
    already = _precheck(path, code_text, person, machine_name)
    hive, code = ops.join_hive(path, code_text, team_remote)
    index_existed = hive.index_path.exists()
    try:
        admitted = _admit(hive, code, person, already, person_key)
    except BaseException:
        _undo(hive, already, index_existed)
        raise
    _write_entries(hive, code, admitted, machine_name)
    name = _confirm(hive, admitted.machine)
    registry.record(hive.team_id, founder=hive.founder, store=hive.store_dir, repo=hive.common_dir, name=name,
                    person=admitted.person)
    report = syncing.run(hive)
    return Joined(hive.team_id, admitted.machine, admitted.person, admitted.created, report)


class _Admitted(NamedTuple):
    """What checking the invite settled: this machine's key and id, the person, role and person key."""

    key: SigningKey
    created: bool
    machine: str
    person: str
    role: str | None
    signer: Signer | None


def _precheck(path: Path | str | None, code_text: str, person: str | None, machine_name: str) -> bool:
    """Check names and the code before anything is configured; whether this clone is already in the team."""
    if person is not None:
        ops.check_name(person, "person name")
    ops.check_name(machine_name, "machine name")
    parsed = invites.parse(code_text)  # a bad code fails before anything is configured
    already = repos.config_get(repos.open_repo(path), KEY_TEAM) == parsed.team_id
    if not already and _active_elsewhere(parsed.team_id):
        raise GitiveError(_ATTACH_INSTEAD)
    return already


def _admit(hive: Hive, code: invites.InviteCode, person: str | None, already: bool,
           person_key: Callable[[], Signer]) -> _Admitted:
    """Fetch the roster and check the invite against it (nothing is written here)."""
    fetched = syncing.run(hive, push=False)
    if fetched.unreachable:
        raise GitiveError(next(iter(fetched.unreachable.values())))
    key, created = load_or_create_key()
    me = machine_id(key)
    with fresh_index(hive) as (conn, _):
        member = conn.execute("SELECT active FROM members WHERE machine = ?", (me,)).fetchone()
        if member and member[0]:
            if already:
                raise GitiveError("this machine is already a member of the team; see `gitive team`")
            raise GitiveError(_ATTACH_INSTEAD)
        role = anchors.invite_role(conn, code.invite_id)
        if person is None and role != anchors.ANCHOR_ROLE:
            raise GitiveError("say who you are: gitive join CODE --person NAME")
        person = person or anchors.ANCHOR_PERSON
        anchors.check_person_name(person, role)
        ops.check_invite(conn, code, me, person)
        signer = None
        if role != anchors.ANCHOR_ROLE:
            if deciding.registered_keys(conn, person) and not personkey.exists():
                raise NotAllowed(_SECOND_MACHINE.format(person=person))  # before a key is made for nothing
            signer = person_key()
            _check_key(conn, person, signer)
    return _Admitted(key, created, me, person, role, signer)


def _undo(hive: Hive, already: bool, index_existed: bool) -> None:
    """Undo what a failed join configured: a clone already in the team stays as it was."""
    if not already:
        ops.unjoin(hive)
    if not index_existed:
        for suffix in ("", "-wal", "-shm"):
            hive.index_path.with_name(hive.index_path.name + suffix).unlink(missing_ok=True)


def _write_entries(hive: Hive, code: invites.InviteCode, admitted: _Admitted, machine_name: str) -> None:
    """The join entry (gestured by the person key, unless this is the anchor), then the person key's."""
    me, person, signer = admitted.machine, admitted.person, admitted.signer
    admission = {"via": "invite", "invite": code.invite_id, "proof": invites.prove(code, me, person)}
    emails = ops.git_emails(hive.project, [])
    record = ops.member_record(me, person, machine_name, emails, admission, role=admitted.role or "member")
    if signer is not None:
        record = gesture.sign(signer, hive.team_id, me, record)
    logs.append(hive.store, admitted.key, hive.team_id, "roster", ops.TEAM_SCOPE, record)
    if signer is not None:
        logs.append(hive.store, admitted.key, hive.team_id, "roster", ops.TEAM_SCOPE,
                    ops.person_key_record(hive.team_id, me, person, signer))


def _confirm(hive: Hive, me: str) -> str | None:
    """Check the roster now admits this machine and make it a member here; the team's name."""
    with fresh_index(hive) as (conn, _):
        if not conn.execute("SELECT 1 FROM members WHERE machine = ? AND active = 1", (me,)).fetchone():
            raise NoTeam("the join entry was written but the roster does not admit this machine; "
                         "run `gitive doctor` to see why")
        membership.ensure_member(hive, conn)
        return _team_name(conn, hive.founder)


class Attached(NamedTuple):
    team_id: str
    team_name: str | None
    machine: str
    person: str
    store: str
    project_role: str | None  # the project membership proposed for this repository (None: one existed)
    report: syncing.SyncReport


def attach(path: Path | str | None, team: str | None = None, source: Path | str | None = None) -> Attached:
    """Add the clone at ``path`` to a team this machine already belongs to, then sync.

    Nothing stays configured when this machine is not an active member of that team.

    Raises:
        GitiveError, NoTeam: with what is wrong and what to do.
    """
    plan = ops.attach_hive(path, team, source)
    hive = plan.hive
    try:
        with fresh_index(hive) as (conn, _):
            row = conn.execute("SELECT person, active FROM members WHERE machine = ?", (hive.me,)).fetchone()
            if not row or not row[1]:
                raise NoTeam("this machine is not an active member of that team: ask a member for an invite and "
                             "run `gitive join CODE --person NAME`")
            role = membership.ensure_member(hive, conn)
            name = _team_name(conn, hive.founder)
    except BaseException:
        ops.unjoin(hive, project_only=True)
        raise
    registry.record(hive.team_id, founder=hive.founder, store=hive.store_dir, repo=hive.common_dir, name=name,
                    person=row[0])
    report = syncing.run(hive)
    return Attached(hive.team_id, name, hive.me, row[0], str(hive.store_dir), role, report)


def _team_name(conn: object, founder: str) -> str | None:
    from gitive.index import queries

    teams = queries.verified_entries(conn, log="roster", kind="team", author=founder)  # type: ignore[arg-type]
    return teams[-1]["record"]["name"] if teams else None


def _active_elsewhere(team_id: str) -> bool:
    """True when another clone on this machine shows it as an active member of ``team_id``."""
    from gitive.core.keys import load_key

    entry = registry.load().get(team_id)
    if entry is None:
        return False
    try:
        hive = ops.team_hive(team_id, entry)
        me = machine_id(load_key())
        with fresh_index(hive) as (conn, _):
            row = conn.execute("SELECT active FROM members WHERE machine = ?", (me,)).fetchone()
    except GitiveError:
        return False
    return bool(row and row[0])
