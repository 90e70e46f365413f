"""Bringing an open index up to date with what was written since it was opened: a check-then-write (a review, a
membership change, a migration) must see its own writes. Below ``refresh`` (which opens the index) and the
writers that catch up after they write (``scopes``, ``personal_migration``)."""

from __future__ import annotations

import sqlite3

from gitive.errors import KeyFileError
from gitive.index import obligations
from gitive.index.problems import Report
from gitive.team.hive import Hive


def me_or_none(hive: Hive) -> str | None:
    try:
        return hive.me
    except KeyFileError:
        return None


def catch_up(hive: Hive, conn: sqlite3.Connection) -> Report:
    """Ingest whatever was written since ``conn`` was opened (a check-then-write must see its own writes)."""
    from gitive.index import ingest  # pygit2 and PyNaCl load only when there is something to ingest

    me = me_or_none(hive)
    report = ingest.ingest(conn, hive.stores(), hive.team_id, hive.founder, me,
                           key=hive.machine_key if me is not None else None)
    obligations.refresh(conn)
    return report
