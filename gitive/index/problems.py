"""What one ingest found: new entries, refs read, lessons touched, and the problems recorded for `gitive doctor`."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import Any

from gitive.core.clock import now_ms


@dataclass
class Report:
    received: int = 0  # new verified entries
    refs_read: int = 0
    lessons_touched: set[str] = field(default_factory=set)
    problems: list[dict[str, Any]] = field(default_factory=list)
    roster_changed: bool = False


def record_problem(conn: sqlite3.Connection, report: Report, kind: str, source: str, commit: str,
                    author: str | None, log: str | None, seq: int | None, detail: str) -> None:
    now = now_ms()
    conn.execute(
        "INSERT INTO problems VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT(kind, source, commit_id) "
        "DO UPDATE SET last_seen = excluded.last_seen, detail = excluded.detail",
        (kind, source, commit, author, log, seq, detail, now, now),
    )
    report.problems.append({"kind": kind, "source": source, "commit": commit, "author": author,
                            "log": log, "seq": seq, "detail": detail})
