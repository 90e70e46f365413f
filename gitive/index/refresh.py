"""Bringing a hive's index up to date before a read: one ref comparison per log when nothing changed."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from gitive.core import notices
from gitive.index import db, ingest, obligations
from gitive.team.hive import Hive


@contextmanager
def fresh_index(hive: Hive, progress: ingest.Progress | None = None) -> Iterator[tuple[sqlite3.Connection, ingest.Report]]:
    """Open the hive's index, ingest anything new under its refs, and yield the connection and report."""
    _cache_project_id(hive)
    with db.connect(hive.index_path) as conn:
        me = _me_or_none(hive)
        report = ingest.ingest(conn, hive.stores(), hive.team_id, hive.founder, me, progress)
        if me is not None:
            _standing(hive, conn, me)
        obligations.refresh(conn)  # a fingerprint query when nothing changed
        yield conn, report


def _standing(hive: Hive, conn: sqlite3.Connection, me: str) -> None:
    """Mark the store when the roster shows this machine removed (writers then refuse), and say so."""
    from gitive.index import deciding
    from gitive.store import repo as repos
    from gitive.team.hive import KEY_REMOVED

    removed = conn.execute("SELECT 1 FROM members WHERE machine = ? AND active = 0", (me,)).fetchone() is not None
    if removed != bool(repos.config_get(hive.store, KEY_REMOVED)):
        if removed:
            repos.config_set(hive.store, KEY_REMOVED, "true")
        else:
            repos.config_unset(hive.store, KEY_REMOVED)
    if notices.listening():
        for line in deciding.notices(conn, me, _local_key()):
            notices.emit(line)


def _local_key() -> str | None:
    from gitive.core import personkey
    from gitive.errors import KeyFileError

    try:
        return personkey.load().public if personkey.exists() else None
    except KeyFileError:
        return None


def catch_up(hive: Hive, conn: sqlite3.Connection) -> ingest.Report:
    """Ingest whatever was written since ``conn`` was opened (a check-then-write must see its own writes)."""
    report = ingest.ingest(conn, hive.stores(), hive.team_id, hive.founder, _me_or_none(hive))
    obligations.refresh(conn)
    return report


def rebuild(hive: Hive, progress: ingest.Progress | None = None) -> ingest.Report:
    """Delete the index and recreate it from refs alone."""
    for suffix in ("", "-wal", "-shm"):
        hive.index_path.with_name(hive.index_path.name + suffix).unlink(missing_ok=True)
    with fresh_index(hive, progress) as (_, report):
        return report


def _me_or_none(hive: Hive) -> str | None:
    from gitive.errors import KeyFileError

    try:
        return hive.me
    except KeyFileError:
        return None


def _cache_project_id(hive: Hive) -> None:
    """Leave the project id where hooks can read it without blake3 (``<git dir>/gitive/project-id``)."""
    from pathlib import Path

    from gitive.team.projects import project_id

    path = Path(hive.project.path) / "gitive" / "project-id"
    pid = project_id(hive.project)
    try:
        if path.read_text().strip() == pid:
            return
    except OSError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(pid + "\n")
    os.replace(tmp, path)
