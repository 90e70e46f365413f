"""Which store and log a lesson, review or tombstone of each scope is written to, and who can read it."""

from __future__ import annotations

import sqlite3

from gitive.core.records import TEAM_SCOPE, project_log
from gitive.errors import GitiveError, InvalidRecord
from gitive.index.membership import my_person
from gitive.lessons.model import SCOPES, Placement
from gitive.store import repo as repos
from gitive.team.hive import Hive


def _readers(repo: object) -> str:
    names = repos.remotes(repo)  # type: ignore[arg-type]
    urls = [repos.remote_url(repo, n) for n in names]  # type: ignore[arg-type]
    return ", ".join(u for u in urls if u) or "this machine only (no remote)"


def place(hive: Hive, conn: sqlite3.Connection, scope_name: str) -> Placement:
    """Where a record of ``scope_name`` goes.

    Raises:
        InvalidRecord: an unknown scope.
    """
    if scope_name == "personal":
        repo = hive.personal_store(create=True)
        assert repo is not None
        return Placement(repo, "personal", {"personal": my_person(hive, conn)},
                         "only this machine: personal lessons are never pushed")
    if scope_name == "project":
        repo = hive.project_store
        pid = hive.project_id
        return Placement(repo, project_log(pid), {"project": pid},
                         f"everyone who can read {_readers(repo)}")
    if scope_name == "team":
        return Placement(hive.store, "team", TEAM_SCOPE, f"everyone who can read {_readers(hive.store)}")
    raise InvalidRecord(f"unknown scope {scope_name!r}; use one of {', '.join(SCOPES)}")


def place_like(hive: Hive, conn: sqlite3.Connection, scope_kind: str, scope_value: str) -> Placement:
    """Placement for a record about an existing lesson: same scope (and project) as the lesson."""
    found = place(hive, conn, scope_kind)
    if scope_kind == "project" and scope_value and found.scope["project"] != scope_value:
        raise GitiveError("that lesson belongs to another project; review it from a clone of that project")
    return found
