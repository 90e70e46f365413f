"""Sync history: one JSON line per sync round in ``<team store>/gitive/sync-history.jsonl``.

Local operational history for ``gitive ui`` (sync health and latency), not a projection of refs: it is never
shared, and ``gitive index rebuild`` (which deletes only the index files) keeps it. A round's latency is how old
teammates' new entries were when they arrived here, counted only for entries written after the previous round
began, so a first sync that brings a backlog of old history is not mistaken for slow sync. The file is capped:
past ``MAX_BYTES`` the oldest half of the rounds is dropped.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from gitive.index import db
from gitive.team.hive import Hive

HISTORY_FILE = "sync-history.jsonl"
MAX_BYTES = 1 << 20


def history_path(hive: Hive) -> Path:
    return hive.index_path.with_name(HISTORY_FILE)


def newest_entry(hive: Hive) -> int:
    """The index's newest entry row (0 with no index yet): what arrives later has a higher row."""
    if not hive.index_path.exists():
        return 0
    with db.connect(hive.index_path, readonly=True) as conn:
        try:
            return conn.execute("SELECT COALESCE(MAX(rowid), 0) FROM entries").fetchone()[0]
        except sqlite3.OperationalError:  # an index created but not migrated yet
            return 0


def arrival_delays(conn: sqlite3.Connection, after_row: int, me: str | None, since: int, now: int) -> list[int]:
    """Milliseconds between writing and arrival of teammates' entries indexed after ``after_row``."""
    rows = conn.execute("SELECT at FROM entries WHERE rowid > ? AND author != ? AND at >= ?",
                        (after_row, me or "", since)).fetchall()
    return sorted(max(0, now - at) for (at,) in rows)


def last_round(hive: Hive) -> dict[str, Any] | None:
    found = read(hive, limit=1)
    return found[-1] if found else None


def record(hive: Hive, round_: dict[str, Any]) -> None:
    """Append one round; trim the oldest half when the file outgrows ``MAX_BYTES`` (under a lock)."""
    path = history_path(hive)
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(round_, sort_keys=True, separators=(",", ":")) + "\n"
    with open(path, "a+", encoding="utf-8") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.write(line)
        f.flush()
        if f.tell() > MAX_BYTES:
            f.seek(0)
            lines = f.readlines()
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text("".join(lines[len(lines) // 2:]), encoding="utf-8")
            os.replace(tmp, path)


def read(hive: Hive, limit: int = 200) -> list[dict[str, Any]]:
    """The newest ``limit`` rounds, oldest first; a torn or foreign line is skipped."""
    out: list[dict[str, Any]] = []
    with contextlib.suppress(FileNotFoundError), open(history_path(hive), encoding="utf-8") as f:
        for line in f.readlines()[-limit:]:
            with contextlib.suppress(ValueError):
                item = json.loads(line)
                if isinstance(item, dict) and isinstance(item.get("at"), int):
                    out.append(item)
    return out


def summary(delays: list[int]) -> dict[str, int] | None:
    if not delays:
        return None
    return {"n": len(delays), "p50": delays[len(delays) // 2], "max": delays[-1]}
