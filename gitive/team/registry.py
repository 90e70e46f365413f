"""The teams this machine belongs to and the repositories it works on for each: ``$GITIVE_HOME/teams.json``.

A machine may belong to several teams; each repository belongs to one. This file is how ``gitive attach``
finds the team (and its store) for another clone, and how commands name the team they act for. It is local
bookkeeping, rebuilt by any ``init``, ``join``, ``attach`` or ``sync``; the refs remain the truth.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gitive.core.home import ensure_home, gitive_home
from gitive.errors import GitiveError

FILE = "teams.json"
VERSION = 1


def _path() -> Path:
    return gitive_home() / FILE


def load() -> dict[str, dict[str, Any]]:
    """``{team id: {name, founder, store, person, repos: [common git dir, …]}}`` (empty when none yet)."""
    try:
        value = json.loads(_path().read_text())
    except (OSError, ValueError):
        return {}
    teams = value.get("teams") if isinstance(value, dict) else None
    return teams if isinstance(teams, dict) else {}


@contextlib.contextmanager
def _locked() -> Iterator[dict[str, dict[str, Any]]]:
    """The registry for a read-modify-write: locked against another gitive process, replaced atomically."""
    home = ensure_home()
    with open(home / f"{FILE}.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        teams = load()
        yield teams
        tmp = home / f".{FILE}.{os.getpid()}.tmp"
        tmp.write_text(json.dumps({"version": VERSION, "teams": teams}, indent=1, sort_keys=True) + "\n")
        os.replace(tmp, _path())


def record(team_id: str, *, founder: str, store: Path | str, repo: Path | str, name: str | None = None,
           person: str | None = None) -> None:
    """Note that ``repo`` (a common git dir) works for ``team_id``, whose store is ``store``."""
    with _locked() as teams:
        entry = teams.setdefault(team_id, {"repos": []})
        entry.update({"founder": founder, "store": str(store)})
        if name:
            entry["name"] = name
        if person:
            entry["person"] = person
        repos = [r for r in entry.get("repos", []) if Path(r).exists() and r != str(repo)]
        entry["repos"] = [*repos, str(repo)]


def forget_repo(team_id: str, repo: Path | str) -> None:
    """Take ``repo`` off ``team_id``'s list (a join or attach that was undone)."""
    with _locked() as teams:
        entry = teams.get(team_id)
        if entry is not None:
            entry["repos"] = [r for r in entry.get("repos", []) if r != str(repo)]
            if not entry["repos"]:
                del teams[team_id]


def name_of(team_id: str) -> str | None:
    entry = load().get(team_id) or {}
    return entry.get("name")


def find(query: str) -> tuple[str, dict[str, Any]]:
    """The registered team whose id starts with ``query`` or whose name is ``query``.

    Raises:
        GitiveError: no team or several teams match.
    """
    teams = load()
    found = [(tid, t) for tid, t in teams.items() if tid.startswith(query.lower()) or t.get("name") == query]
    if len(found) == 1:
        return found[0]
    listing = ", ".join(f"{t.get('name', '?')} ({tid[:12]})" for tid, t in teams.items()) or "none yet"
    if not found:
        raise GitiveError(f"this machine is in no team called {query!r}; its teams: {listing}")
    raise GitiveError(f"{query!r} matches several teams: {listing}; give more of the team id")
