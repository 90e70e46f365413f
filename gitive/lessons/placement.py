"""Which store and log a lesson, review or tombstone of each scope is written to, and who can read it."""

from __future__ import annotations

import sqlite3

from gitive.core.records import TEAM_SCOPE, project_log
from gitive.errors import GitiveError, InvalidRecord
from gitive.index.membership import my_person
from gitive.lessons.model import SCOPES, Placement
from gitive.store import gitdir
from gitive.store import repo as repos
from gitive.team.hive import KEY_SEALED, Hive


def _readers(repo: object) -> str:
    names = repos.remotes(repo)  # type: ignore[arg-type]
    urls = [repos.remote_url(repo, n) for n in names]  # type: ignore[arg-type]
    return ", ".join(u for u in urls if u) or "this machine only (no remote)"


def _machines(conn: sqlite3.Connection, person: str) -> str:
    names = [r[0] for r in conn.execute("SELECT name FROM members WHERE person = ? AND active = 1 AND role != "
                                        "'anchor' ORDER BY name", (person,))]
    return ", ".join(f"{person}/{n}" for n in names)


def sealed_by_default(hive: Hive) -> bool:
    """Whether this repository seals its project lessons unless told otherwise (``git config hive.sealed true``)."""
    value = gitdir.read_config(hive.common_dir).get(KEY_SEALED.lower()) or ""
    return value.lower() in ("true", "yes", "on", "1")


def place(hive: Hive, conn: sqlite3.Connection, scope_name: str, sealed: bool | None = None) -> Placement:
    """Where a record of ``scope_name`` goes; ``sealed`` (project scope) encrypts it to the team's machines
    (default: ``hive.sealed`` of this repository). Personal records are always sealed, in the team store.

    Raises:
        InvalidRecord: an unknown scope, or ``sealed`` for team scope.
    """
    if scope_name == "personal":
        person = my_person(hive, conn)
        return Placement(hive.store, "personal", {"personal": person},
                         f"only your own machines ({_machines(conn, person)}): sealed in the team store, "
                         f"which {_readers(hive.store)} can read", True)
    if scope_name == "project":
        repo = hive.project_store
        pid = hive.project_id
        if sealed if sealed is not None else sealed_by_default(hive):
            return Placement(repo, project_log(pid), {"project": pid},
                             f"the team's machines only: sealed in the project store, which {_readers(repo)} "
                             "can read", True)
        return Placement(repo, project_log(pid), {"project": pid},
                         f"everyone who can read {_readers(repo)}")
    if scope_name == "team":
        if sealed:
            raise InvalidRecord("team scope is never sealed (the whole team reads it); seal project or "
                                "personal lessons")
        return Placement(hive.store, "team", TEAM_SCOPE, f"everyone who can read {_readers(hive.store)}")
    raise InvalidRecord(f"unknown scope {scope_name!r}; use one of {', '.join(SCOPES)}")


def place_like(hive: Hive, conn: sqlite3.Connection, scope_kind: str, scope_value: str,
               lesson: str | None = None) -> Placement:
    """Placement for a record about an existing lesson: same scope (and project) as the lesson, sealed when the
    lesson is."""
    sealed = None
    if scope_kind == "project":
        sealed = lesson is not None and is_sealed(conn, lesson)
    found = place(hive, conn, scope_kind, sealed)
    if scope_kind == "project" and scope_value and found.scope["project"] != scope_value:
        raise GitiveError("that lesson belongs to another project; review it from a clone of that project")
    return found


def is_sealed(conn: sqlite3.Connection, lesson: str) -> bool:
    """Whether ``lesson``'s header is a sealed entry (so records about it are sealed too)."""
    return conn.execute("SELECT 1 FROM lessons l JOIN sealed_entries s ON s.author = l.author AND s.log = l.log "
                        "AND s.seq = l.seq WHERE l.id = ?", (lesson,)).fetchone() is not None
