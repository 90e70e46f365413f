"""Founding, inviting, joining and removing: the roster operations behind ``gitive init|invite|join|team``."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from gitive.constants import INVITE_DEFAULT_TTL_MS
from gitive.core import gesture, roles
from gitive.core.clock import now_ms
from gitive.core.home import ensure_home
from gitive.core.ids import is_name
from gitive.core.keys import load_or_create_key, machine_id
from gitive.core.records import TEAM_SCOPE
from gitive.errors import GitiveError, InvalidRecord, InviteError, NotARepository, NoTeam, RemoteError
from gitive.store import logs, objects, refs, sync
from gitive.store import repo as repos
from gitive.team import authority, invites
from gitive.team.hive import KEY_FOUNDER, KEY_STORE, KEY_TEAM, Hive, open_hive

if TYPE_CHECKING:
    from gitive.core.personkey import Signer
    from gitive.store.types import Repo


def default_machine_name() -> str:
    slug = re.sub(r"[^a-z0-9-]+", "-", socket.gethostname().lower()).strip("-")
    return (slug or "machine")[:64]


def check_name(value: str, what: str) -> str:
    if not is_name(value):
        raise InvalidRecord(f"{what} {value!r} is not allowed: use 1-64 of a-z, 0-9 and -")
    return value


def member_record(machine: str, person: str, name: str, emails: list[str], admission: dict[str, Any] | None,
            active: bool = True, role: str = "member") -> dict[str, Any]:
    record = {"type": "member", "machine": machine, "person": person, "name": name, "role": role,
              "active": active, "emails": emails, "ts": now_ms()}
    if admission is not None:
        record["admission"] = admission
    return record


def git_emails(repo: Repo, extra: list[str]) -> list[str]:
    found = repos.config_get(repo, "user.email")
    return sorted({*extra, *([found] if found else [])})


def _store_for(project: Repo, team_id: str, team_remote: str | None) -> Repo:
    """The team store: the project itself, or a bare clone of ``team_remote`` under ``$GITIVE_HOME/teams``."""
    if not team_remote:
        return project
    path = ensure_home() / "teams" / f"{team_id}.git"
    store = repos.init_bare(path)
    if repos.remote_url(store, "origin") is None:
        repos.remote_add(store, "origin", team_remote)
    return store


def _configure(project: Repo, store: Repo, team_id: str, founder: str) -> None:
    for repo in {project.path: project, store.path: store}.values():
        repos.config_set(repo, KEY_TEAM, team_id)
        repos.config_set(repo, KEY_FOUNDER, founder)
        for remote in repos.remotes(repo):  # every remote gets the hive refspec, so sync uses each of them
            sync.configure_remote(repo, remote)
        if repo.path == project.path:  # a separate store migrates at its first sync
            sync.migrate_config(repo)  # stamps the version: a hive.remote set from now on is a person's choice
    if store.path != project.path:
        repos.config_set(project, KEY_STORE, store.path)


def _rosters(project: Repo, where: str) -> dict[str, str]:
    """The roster logs on remote ``where`` (a remote name or a URL): machine -> tip commit."""
    tips = sync.probe(project, where, ["refs/hive/logs/*/roster"])
    return {name.split("/")[3]: tip for name, tip in tips.items() if name.count("/") == 4}


def _known_teams(rosters: dict[str, str]) -> list[tuple[str, dict[str, Any]]]:
    """The registered teams whose store holds one of these roster commits. An entry's commit id hashes its
    signature, which is made for one team id, so a shared commit means the same team."""
    from gitive.team import registry

    found = []
    for team_id, entry in registry.load().items():
        try:
            store = repos.open_at(entry["store"])
        except (KeyError, NotARepository):
            continue
        if any(objects.present(store, tip) for tip in rosters.values()):
            found.append((team_id, entry))
    return found


def _refuse_second_team(where: str, rosters: dict[str, str]) -> GitiveError:
    mine = _known_teams(rosters)
    if mine:
        team_id, team = mine[0]
        return GitiveError(f"{where} already holds team {team.get('name') or '?'} ({team_id[:12]}), which this "
                           "machine belongs to: run `gitive attach` here instead of founding a second team")
    return GitiveError(f"{where} already holds a gitive team, so founding another there would split it: ask a "
                       "member for an invite and run `gitive join CODE --person NAME` (nothing was written)")


def _check_free(project: Repo, team_remote: str | None) -> list[str]:
    """Refuse to found a team where one already lives; return the remotes that could not be asked."""
    unchecked = []
    for where in [team_remote] if team_remote else repos.remotes(project):
        try:
            rosters = _rosters(project, where)
        except RemoteError:
            unchecked.append(where)
            continue
        if rosters:
            raise _refuse_second_team(where, rosters)
    return unchecked


def check_found(path: Path | str | None, person: str, machine_name: str,
                team_remote: str | None = None) -> Repo:
    return _check_found(path, person, machine_name, team_remote)[0]


def _check_found(path: Path | str | None, person: str, machine_name: str,
                 team_remote: str | None) -> tuple[Repo, list[str]]:
    """The repository a team can be founded in, or why not (before any key is created). Asks each remote
    whether it already holds a team (a remote it cannot reach is let through: ``found`` names it).

    Raises:
        GitiveError: not a repository, it already belongs to a team, or a name is not allowed.
    """
    project = repos.open_repo(path)
    if repos.config_get(project, KEY_TEAM):
        raise GitiveError(f"this repository already belongs to team {repos.config_get(project, KEY_TEAM)}; "
                          "see `gitive team`")
    check_name(person, "person name")
    check_name(machine_name, "machine name")
    if person == "anchor":
        raise GitiveError("the person name 'anchor' is reserved for the team's anchor machine; choose another name")
    return project, _check_free(project, team_remote)


class Founded(NamedTuple):
    team_id: str
    machine: str
    key_created: bool
    store: str
    remotes: list[str]
    unchecked: list[str]  # remotes that could not be asked whether they already hold a team (unreachable)


def found(path: Path | str | None, person: str, machine_name: str, team_name: str,
          team_remote: str | None = None, emails: list[str] | None = None, *, signer: Signer) -> Founded:
    """Found a v2 team in the repository at ``path``: a new team id and the founder's signed entries.

    The founder is the team's first admin; ``signer`` (the founder's unlocked person key) gestures the
    founder's entry and is registered as the founder's person key.

    Raises:
        GitiveError: the repository already belongs to a team, or a name is not allowed.
    """
    project, unchecked = _check_found(path, person, machine_name, team_remote)
    key, created = load_or_create_key()
    me = machine_id(key)
    team_id = os.urandom(16).hex()
    store = _store_for(project, team_id, team_remote)
    founder = member_record(me, person, machine_name, git_emails(project, emails or []), {"via": "founder"},
                            role=roles.ADMIN)
    logs.append(store, key, team_id, "roster", TEAM_SCOPE, gesture.sign(signer, team_id, me, founder))
    logs.append(store, key, team_id, "roster", TEAM_SCOPE, person_key_record(team_id, me, person, signer))
    logs.append(store, key, team_id, "roster", TEAM_SCOPE,
                {"type": "team", "name": team_name, "founder": me, "version": roles.TEAM_VERSION})
    _configure(project, store, team_id, me)
    _register(team_id, me, store, project, team_name, person)
    return Founded(team_id, me, created, store.path, sync.sync_remotes(store), unchecked)


def _register(team_id: str, founder: str, store: Repo, project: Repo,
              name: str | None = None, person: str | None = None) -> None:
    from gitive.team import registry

    registry.record(team_id, founder=founder, store=Path(store.path), repo=_common_dir(project), name=name,
                    person=person)


def _common_dir(repo: Repo) -> Path:
    """The repository's shared git dir (a linked worktree's points at its main clone's)."""
    from gitive.store import gitdir

    found = gitdir.find(repo.workdir) if repo.workdir else None
    return found.common_dir if found else Path(repo.path)


def person_key_record(team_id: str, me: str, person: str, signer: Signer,
                      endorser: Signer | None = None) -> dict[str, Any]:
    """A ``person-key`` record registering ``signer``'s key for ``person`` (gestured by that key itself)."""
    record: dict[str, Any] = {"type": "person-key", "person": person, "key": signer.public, "ts": now_ms()}
    if endorser is not None:
        record = gesture.sign(endorser, team_id, me, record, "endorse")
    return gesture.sign(signer, team_id, me, record)


def create_invite(hive: Hive, conn: sqlite3.Connection, *, reusable: bool, ttl_ms: int = INVITE_DEFAULT_TTL_MS,
                  person: str | None = None, signer: Signer | None = None,
                  dry_run: bool = False) -> tuple[str, dict[str, Any]]:
    """Write an invite (a decision: gestured by ``signer``) to this machine's roster log; return the code to
    hand over and the record. ``dry_run`` checks everything but the key and writes nothing."""
    from gitive.index import deciding

    _require_active(conn, hive.me)
    if person:
        check_name(person, "person name")
    deciding.decider(conn, hive.me, signer, key_known=not dry_run)
    if dry_run:
        return "", {}
    secret = invites.new_secret()
    code = invites.InviteCode(hive.team_id, hive.founder, secret)
    record: dict[str, Any] = {"type": "invite", "id": code.invite_id, "key": machine_id(code.key()),
                              "reusable": reusable, "expires": now_ms() + ttl_ms}
    if person:
        record["person"] = person
    record = deciding.signed(hive.team_id, hive.me, record, signer)
    logs.append(hive.store, hive.key, hive.team_id, "roster", TEAM_SCOPE, record)
    return code.encode(), record


def _require_active(conn: sqlite3.Connection, me: str) -> None:
    from gitive.index import deciding

    deciding.me_as_member(conn, me)


def check_invite(conn: sqlite3.Connection, code: invites.InviteCode, me: str, person: str) -> None:
    """Refuse an invite the fetched roster shows to be unknown, expired, used, or for someone else.

    Raises:
        InviteError: with what is wrong and what to do.
    """
    from gitive.index import queries

    found = [e for e in queries.verified_entries(conn, log="roster", kind="invite", limit=100_000)
             if e["record"]["id"] == code.invite_id]
    if not found:
        raise InviteError("this invite is not in the team's roster on the remote: ask the inviter to run "
                          "`gitive sync`, or for a new invite")
    record, inviter_person = found[-1]["record"], found[-1]["person"]
    if record["expires"] < now_ms():
        raise InviteError("this invite has expired; ask for a new one (`gitive invite`)")
    if record.get("person") and record["person"] != person:
        raise InviteError(f"this invite is for person {record['person']!r}, not {person!r}")
    if not record["reusable"]:
        from gitive.index.roster import current_roster

        used_by = current_roster(conn, code.team_id, code.founder).used.get(code.invite_id)
        if used_by not in (None, me):
            raise InviteError("this one-time invite was already used; ask for a new one")
    taken = conn.execute("SELECT COUNT(*) FROM members WHERE person = ? AND active = 1", (person,)).fetchone()[0]
    if taken and inviter_person != person and record.get("role") != "anchor":  # a second anchor: an admin's invite
        raise InviteError(f"person {person!r} already has machines in this team; to add a machine for "
                          f"{person}, use an invite made on one of {person}'s machines")


def _head_seq(repo: Repo, machine: str, log: str) -> int:
    tip = refs.tip(repo, refs.log_ref(machine, log))
    return logs.read_entry(repo, tip).seq if tip else 0


def remove(hive: Hive, conn: sqlite3.Connection, target: str, signer: Signer | None = None,
           *, dry_run: bool = False) -> list[dict[str, Any]]:
    """Sign departure entries for a person (all their machines), ``person/name``, or a machine id prefix.

    Each records the removed machine's log heads as this index holds them (for this machine's own departure,
    its heads up to the departure itself), so readers refuse its later entries by position.

    ``dry_run`` checks everything but the key and writes nothing.

    Raises:
        NotAllowed: another person's machine and this person is not an admin, or no admin would be left.
    """
    from gitive.index import deciding, queries
    from gitive.index.roster import heads_of

    _require_active(conn, hive.me)
    me = deciding.decider(conn, hive.me, signer, key_known=not dry_run)
    members = [m for m in queries.members(conn) if m["active"]]
    person, _, name = target.partition("/")
    chosen = [m for m in members if (m["person"] == person and (not name or m["name"] == name))
              or (len(target) >= 8 and m["machine"].startswith(target))]
    if not chosen:
        raise GitiveError(f"no active member matches {target!r}; see `gitive team`")
    authority.check_removal(chosen, members, me, deciding.admins(conn))
    if dry_run:
        return chosen
    chosen.sort(key=lambda m: m["machine"] == hive.me)  # this machine's own departure last: it ends its log
    for m in chosen:
        heads = heads_of(conn, m["machine"])
        if m["machine"] == hive.me:
            heads["roster"] = _head_seq(hive.store, hive.me, "roster") + 1
        record = member_record(m["machine"], m["person"], m["name"], m["emails"], None, active=False,
                               role=m["role"])
        record["heads"] = heads
        logs.append(hive.store, hive.key, hive.team_id, "roster", TEAM_SCOPE,
                    deciding.signed(hive.team_id, hive.me, record, signer))
    return chosen


def join_hive(path: Path | str | None, code_text: str, team_remote: str | None) -> tuple[Hive, invites.InviteCode]:
    """Configure the repository at ``path`` for the team in ``code_text`` (no entry is written)."""
    code = invites.parse(code_text)
    project = repos.open_repo(path)
    existing = repos.config_get(project, KEY_TEAM)
    if existing and existing != code.team_id:
        raise InviteError(f"this repository already belongs to another team ({existing})")
    if not repos.remotes(project) and not team_remote:
        raise InviteError("this repository has no remote to find the team on; clone it from the team's "
                          "remote, or pass --team-remote URL")
    store = _store_for(project, code.team_id, team_remote)
    _configure(project, store, code.team_id, code.founder)
    return open_hive(path), code


def unjoin(hive: Hive, *, project_only: bool = False) -> None:
    """Undo :func:`join_hive` (or :func:`attach_hive` with ``project_only``: the team store is shared with the
    machine's other clones and stays as it is), so a failed join leaves the repository as it was."""
    for repo in [hive.project] if project_only else hive.shared_stores():
        for key in (KEY_TEAM, KEY_FOUNDER, KEY_STORE, sync.KEY_CONFIG_VERSION):
            repos.config_unset(repo, key)
        for remote in repos.remotes(repo):
            repos.config_unset_matching(repo, f"remote.{remote}.fetch", re.escape(sync.fetch_refspec(remote)))


def _team_for(project: Repo, team: str | None, source: Path | str | None) -> Hive:
    """A hive of the team another clone should attach to: the one named, the one ``source`` is in, the one
    the clone's remotes already hold, or this machine's only team.

    Raises:
        GitiveError: no team, or several and nothing says which.
    """
    from gitive.team import registry

    if source is not None:
        return open_hive(source)
    if team is not None:
        team_id, entry = registry.find(team)
        return team_hive(team_id, entry)
    teams = registry.load()
    if not teams:
        raise NoTeam("this machine is in no team yet: `gitive init --person NAME` founds one, `gitive join CODE "
                     "--person NAME` joins one (or pass --from PATH, a clone that is already in the team)")
    held: dict[str, str] = {}
    for where in repos.remotes(project):
        with contextlib.suppress(RemoteError):
            held |= _rosters(project, where)
    matching = _known_teams(held) if held else []
    if len(matching) == 1 or len(teams) == 1:
        team_id, entry = matching[0] if matching else next(iter(teams.items()))
        return team_hive(team_id, entry)
    listing = ", ".join(f"{t.get('name') or '?'} ({tid[:12]})" for tid, t in teams.items())
    raise GitiveError(f"this machine is in several teams ({listing}): say which with --team NAME")


def team_hive(team_id: str, entry: dict[str, Any]) -> Hive:
    """A hive of one of this machine's clones in ``team_id`` (from its registry ``entry``).

    Raises:
        NoTeam: none of those clones is left.
    """
    for repo in reversed(entry.get("repos", [])):
        with contextlib.suppress(GitiveError, OSError):
            hive = open_hive(Path(repo).parent if Path(repo).name == ".git" else repo)
            if hive.team_id == team_id:
                return hive
    raise NoTeam(f"none of the clones this machine used for team {entry.get('name') or team_id[:12]} is left; "
                 "pass --from PATH, a clone that is in the team")


class AttachPlan(NamedTuple):
    hive: Hive  # the newly attached repository's hive
    source: Hive  # the hive of a clone already in the team


def attach_hive(path: Path | str | None, team: str | None = None, source: Path | str | None = None) -> AttachPlan:
    """Configure the repository at ``path`` for a team this machine is already in (no entry is written).

    The repository shares the team's store (and index) with the machine's other clones of that team; its own
    project records stay in it and travel with its remotes.

    Raises:
        GitiveError: the repository is in a team already, the team is unknown, or this machine already works
            on the same project in another clone of the team (a second copy of its log would fork it).
    """
    from gitive.team import projects

    project = repos.open_repo(path)
    existing = repos.config_get(project, KEY_TEAM)
    if existing:
        raise GitiveError(f"this repository already belongs to team {existing[:12]}; see `gitive team`")
    src = _team_for(project, team, source)
    pid = _linked_id(src, projects.project_id(project))
    if src.project_id == pid:
        raise GitiveError(f"this machine already works on this project in {src.project.workdir}: a second clone "
                          "would fork its log; use `git worktree add` there instead")
    _check_same_project(src.team_id, pid, project)
    store = src.store
    if Path(store.path).resolve() == _common_dir(project).resolve():
        raise GitiveError("this repository is the team's store already; see `gitive team`")
    _configure(project, store, src.team_id, src.founder)
    return AttachPlan(open_hive(path), src)


def _linked_id(src: Hive, remote_id: str) -> str:
    """The project id a repository with this remote id reads as in ``src``'s team (an admin may have linked a
    moved remote to its old id: index.project_links), so a clone of a moved remote is still the same project."""
    import sqlite3

    from gitive.index import db, project_links

    if not src.index_path.exists():
        return remote_id
    try:
        with db.connect(src.index_path, readonly=True) as conn:
            return project_links.resolve(conn, src.team_id, remote_id)
    except sqlite3.Error:
        return remote_id


def _check_same_project(team_id: str, pid: str, project: Repo) -> None:
    from gitive.store import gitdir
    from gitive.team import registry

    here = _common_dir(project).resolve()
    for repo in (registry.load().get(team_id) or {}).get("repos", []):
        cached = Path(repo) / "gitive" / "project-id"
        try:
            other = cached.read_text().strip()
        except OSError:
            continue
        if other == pid and Path(repo).resolve() != here and gitdir.read_config(Path(repo)).get(KEY_TEAM.lower()):
            raise GitiveError(f"this machine already works on this project in {Path(repo).parent}: a second clone "
                              "would fork its log; use `git worktree add` there instead")


def require_remote(hive: Hive, why: str) -> None:
    """Refuse an action whose result only makes sense once the team store syncs with some remote.

    Raises:
        GitiveError: the team store has no remote sync uses (nothing was written).
    """
    if sync.sync_remotes(hive.store):
        return
    if not repos.remotes(hive.store):
        raise GitiveError(f"this repository has no remote, so {why}: add one (`git remote add origin URL`), run "
                          "`gitive sync`, then try again (nothing was written)")
    raise GitiveError(f"no remote of this repository carries hive refs, so {why}: `gitive doctor` shows how to "
                      "add the refspec (nothing was written)")
