"""How many lessons are in each state, counted the way ``catalog`` labels them (held = proposed > 24 h)."""

from __future__ import annotations

import sqlite3

from gitive.core.clock import now_ms
from gitive.lessons.catalog import HELD_AFTER_MS, STATES


def counts(conn: sqlite3.Connection, now: int | None = None) -> dict[str, int]:
    """Visible lessons per state (every state of ``catalog.STATES`` present, zero included); one query."""
    now = now if now is not None else now_ms()
    out = dict.fromkeys(STATES, 0)
    sql = ("SELECT CASE WHEN s.state = 'proposed' AND ? - l.at > ? THEN 'held' ELSE s.state END AS st, COUNT(*) "
           "FROM visible_lessons l JOIN lesson_status s ON s.lesson = l.id GROUP BY st")
    for state, n in conn.execute(sql, (now, HELD_AFTER_MS)):
        out[state] = out.get(state, 0) + n
    return out
