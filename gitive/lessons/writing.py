"""Writing a lesson, review, tombstone or citation where its placement says: in the clear, or sealed."""

from __future__ import annotations

import sqlite3
from typing import Any

from gitive.index import scopes
from gitive.lessons.model import Placement
from gitive.store import bodies, logs
from gitive.team.hive import Hive


def write(hive: Hive, conn: sqlite3.Connection, where: Placement, record: dict[str, Any],
          body_items: dict[str, bytes] | None = None) -> None:
    """Write ``record`` and the bodies it names (``body hash -> canonical bytes``), bodies first: a header
    whose body is missing is recoverable, a body without a header is just unused.

    Raises:
        InvalidRecord: the record fails its checks; nothing was written.
        NotAllowed: this machine may not write a sealed scope it names.
    """
    if where.sealed:
        scopes.write(hive, conn, where.repo, where.log, where.scope, record, body_items)
        return
    for digest, data in (body_items or {}).items():
        bodies.put(where.repo, hive.key, hive.team_id, digest, data)
    logs.append(where.repo, hive.key, hive.team_id, where.log, where.scope, record)
