"""What one ingest found: new entries, refs read, lessons touched, and the problems recorded for `gitive doctor`."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import Any

from gitive.constants import CHAIN_PROBLEMS
from gitive.core.clock import now_ms

# Problems that describe a ref's current tip: replaced whenever that ref is read again, so the index reports
# what its refs hold now, exactly as a rebuild would.
TIP_PROBLEMS = (*CHAIN_PROBLEMS, "unknown-signer")


@dataclass
class Report:
    received: int = 0  # new verified entries
    refs_read: int = 0
    lessons_touched: set[str] = field(default_factory=set)
    problems: list[dict[str, Any]] = field(default_factory=list)
    roster_changed: bool = False
    quarantined: bool = False  # an equivocation hid entries: every lesson state is recomputed


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


def clear_chain_problems(conn: sqlite3.Connection, source: str) -> None:
    """Forget what an earlier tip of ``source`` was refused for (it is being read again)."""
    conn.execute(f"DELETE FROM problems WHERE source = ? AND kind IN ({','.join('?' * len(TIP_PROBLEMS))})",
                 (source, *TIP_PROBLEMS))
