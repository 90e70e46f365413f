"""This machine's own mail, read-only: the daemon's database (``$GITIVE_HOME/daemon.sqlite``) opened ``mode=ro``
(what this machine sent is read from the index: :mod:`gitive.index.mail`).

``gitive next`` and the dashboard read here, never through ``gitive.daemon``: a reader must not create the
daemon's database, change a message's state, or load the daemon (tests/ui/test_layers.py). The columns read
are those of ``gitive/daemon/db.py``'s ``inbox`` table.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from gitive.core.home import gitive_home

UNREAD = ("queued", "inflight", "delivered")  # not yet read by the session it went to
_KEYS = ("id", "from", "to_session", "state", "body", "reason", "reply_to", "received_at")


@contextmanager
def open_readonly() -> Iterator[sqlite3.Connection | None]:
    """The daemon's database, read-only, or None when this machine has none (or no inbox) yet."""
    path = gitive_home() / "daemon.sqlite"
    if not path.exists():
        yield None
        return
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10)
    try:
        has = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'inbox'").fetchone()
        yield conn if has else None
    finally:
        conn.close()


def received(db: sqlite3.Connection | None, limit: int = 100, states: tuple[str, ...] | None = None
             ) -> list[dict[str, Any]]:
    """Messages to this machine's sessions, newest first (one row per message and session)."""
    if db is None:
        return []
    where = f"WHERE state IN ({', '.join('?' * len(states))})" if states else ""
    rows = db.execute(f"SELECT {', '.join(k if k != 'from' else 'sender' for k in _KEYS)} FROM inbox {where} "
                      "ORDER BY received_at DESC, id LIMIT ?", (*(states or ()), limit)).fetchall()
    return [dict(zip(_KEYS, r, strict=True)) for r in rows]

