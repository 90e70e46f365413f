"""A team's own Outside paths: globs an admin adds, with a gesture, to the anchor's built-in Outside list.

An ``outside-paths`` record (format v1, ``refs_schema/outside-paths.schema.json``) in the admin's team log names
one project and its globs (``deploy/**``, ``infra/*.tf``). The anchor refuses a draft or a landing touching any
of them, as it does CI configuration (:mod:`.tiers`). Readers count a record only when its gesture is by a key
registered for a person who is an admin now, and only version 1 (a later version is not understood, so it is
not counted, and says so in ``gitive standing outside``). The paths only grow: every counted record adds its
globs, and none removes any, so a record appended again (a replay by an agent holding only the machine key)
changes nothing. Taking a path out is not offered yet. ``prepared.outside`` in ``anchor.yaml`` adds more, on the
anchor machine alone.
"""

from __future__ import annotations

import sqlite3
from typing import Any

KIND = "outside-paths"
VERSION = 1
MAX_PATHS = 100
MAX_GLOB = 200


def paths_problem(paths: list[str]) -> str | None:
    """Why these globs cannot be recorded, or None."""
    if not paths or len(paths) > MAX_PATHS:
        return f"give 1 to {MAX_PATHS} globs"
    bad = next((p for p in paths if not isinstance(p, str) or not p.strip() or len(p) > MAX_GLOB
                or p.startswith("/") or "\n" in p), None)
    if bad is not None:
        return f"{str(bad)[:80]!r} is not a path glob (relative, one line, at most {MAX_GLOB} characters)"
    return None


def all_records(index: sqlite3.Connection, team_id: str) -> list[dict[str, Any]]:
    """Every ``outside-paths`` record the index holds, with ``counted`` and, when not, ``problem``."""
    from gitive.anchor.prepared.standing import _gestured, _rows
    from gitive.index import deciding

    out = []
    for role, author, person, _log, _seq, at, record in _rows(index, KIND):
        if record.get("v") != VERSION:
            problem = f"format v{record.get('v')} is not understood here (v{VERSION})"
        elif role == "anchor" or not _gestured(index, team_id, author, person, record):
            problem = "it carries no valid gesture of a person's key"
        elif not deciding.is_admin(index, person):
            problem = f"{person} is not an admin"
        else:
            problem = paths_problem(record.get("paths") or [])
        out.append({**record, "author": author, "person": person, "at": at, "counted": problem is None,
                    "problem": problem})
    return out


def team_paths(index: sqlite3.Connection, team_id: str, repo: str) -> tuple[str, ...]:
    """The union of the globs every counted record gives project ``repo``."""
    found: dict[str, None] = {}
    for record in all_records(index, team_id):
        if record["counted"] and record["repo"] == repo:
            found.update(dict.fromkeys(record["paths"]))
    return tuple(found)


def add(hive: Any, conn: sqlite3.Connection, paths: list[str], signer: Any, now: int) -> dict[str, Any]:
    """Sign and append an ``outside-paths`` record for this project, as this machine's person (an admin).

    Raises:
        NotAllowed: an anchor machine, no (registered) person key, or not an admin: it would not count.
        GitiveError: bad globs.
    """
    from gitive.core import gesture
    from gitive.core.records import TEAM_SCOPE
    from gitive.errors import GitiveError, NotAllowed
    from gitive.index import deciding
    from gitive.store import logs

    if signer is None:
        raise NotAllowed("Outside paths need an admin's person key (`gitive person init`): readers refuse them "
                         "without its gesture")
    person = deciding.decider(conn, hive.me, signer)
    if not deciding.is_admin(conn, person):
        raise NotAllowed(f"{person} is not an admin: only an admin adds Outside paths")
    problem = paths_problem(paths)
    if problem:
        raise GitiveError(f"these Outside paths cannot be recorded: {problem}")
    record = {"type": KIND, "v": VERSION, "repo": hive.project_id, "paths": sorted(set(paths)),
              "created": now}
    done = gesture.sign(signer, hive.team_id, hive.me, record)
    logs.append(hive.store, hive.key, hive.team_id, "team", TEAM_SCOPE, done, at=now)
    return done
