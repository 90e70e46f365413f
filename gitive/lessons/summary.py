"""How many lessons are in each state, counted the way ``catalog`` labels them (held = proposed > 24 h)."""

from __future__ import annotations

import sqlite3

from gitive.core.clock import now_ms
from gitive.index import admitted
from gitive.lessons.catalog import HELD_AFTER_MS, STATES


def counts(conn: sqlite3.Connection, now: int | None = None) -> dict[str, int]:
    """Visible lessons per state (every state of ``catalog.STATES`` present, zero included): one grouped query
    (and one count of the held among the proposed when nobody's entries need an admission check)."""
    now = now if now is not None else now_ms()
    out = dict.fromkeys(STATES, 0)
    if admitted.wholesale(conn):  # nobody to refuse: both counts from indexes, bodies of rows never read
        for state, n in conn.execute("SELECT s.state, COUNT(*) FROM lesson_status s JOIN lessons l ON l.id = s.lesson "
                                     "GROUP BY s.state"):
            out[state] = n
        out["held"] = conn.execute("SELECT COUNT(*) FROM lesson_status s JOIN lessons l ON l.id = s.lesson "
                                   "WHERE s.state = 'proposed' AND l.at < ?", (now - HELD_AFTER_MS,)).fetchone()[0]
        out["proposed"] -= out["held"]
        return out
    # lessons first, each looked up in lesson_status: a scan in storage order, admission checked only where it
    # can refuse (gitive.index.admitted), instead of visible_lessons' five lookups per row.
    sql = ("SELECT CASE WHEN s.state = 'proposed' AND ? - l.at > ? THEN 'held' ELSE s.state END AS st, COUNT(*) "
           f"FROM lessons l CROSS JOIN lesson_status s ON s.lesson = l.id WHERE {admitted.where(conn, 'l')} "
           "GROUP BY st")
    for state, n in conn.execute(sql, (now, HELD_AFTER_MS)):
        out[state] = out.get(state, 0) + n
    return out
