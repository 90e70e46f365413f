"""Activity over time from the verified union: entries per day, each machine's last entry, quarantined logs.

Aggregates for the dashboard's plots and "last seen" columns. They count only what ``queries.VERIFIED``
admits, so a forged or quarantined entry never shows up as activity.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from gitive.index.queries import VERIFIED

DAY_MS = 86_400_000


def per_day(conn: sqlite3.Connection, kind: str, since: int, until: int) -> list[dict[str, Any]]:
    """Verified entries of ``kind`` per UTC day in ``[since, until)``, every day listed (zero included).

    For ``citation`` entries each day also counts the successful ones.
    """
    first, last = since // DAY_MS, (until - 1) // DAY_MS
    sql = (f"SELECT v.at / {DAY_MS} AS day, COUNT(*), "
           "SUM(CASE WHEN json_extract(v.envelope, '$.body.record.success') = 1 THEN 1 ELSE 0 END) "
           f"FROM ({VERIFIED} AND e.kind = ? AND e.at >= ? AND e.at < ?) AS v GROUP BY day")
    found = {day: (n, ok) for day, n, ok in conn.execute(sql, (kind, since, until))}
    return [{"day": d * DAY_MS, "count": found.get(d, (0, 0))[0], "successes": found.get(d, (0, 0))[1]}
            for d in range(first, last + 1)]


def last_entry(conn: sqlite3.Connection) -> dict[str, int]:
    """Each machine's newest verified entry time (ms): when it last wrote anything the team can see."""
    sql = f"SELECT v.author, MAX(v.at) FROM ({VERIFIED}) AS v GROUP BY v.author"
    return dict(conn.execute(sql).fetchall())


def quarantined_logs(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Logs quarantined by an equivocation: entries from ``from_seq`` on are not used."""
    rows = conn.execute("SELECT l.author, l.log, l.quarantined_from, l.hwm, m.person, m.name FROM logs l "
                        "LEFT JOIN members m ON m.machine = l.author WHERE l.quarantined_from IS NOT NULL "
                        "ORDER BY l.author, l.log").fetchall()
    return [{"author": a, "log": log, "from_seq": q, "high_water": hwm, "person": p, "machine_name": n}
            for a, log, q, hwm, p, n in rows]
