"""Superseded lessons and the lesson that now stands for each: the newest version of its chain still shown.

Search never returns a superseded lesson, but its words still name its topic, and someone asking about the
old way is asking about the current one. ``superseded`` lists every superseded lesson with its newest shown
successor and the old text, applicability, tags and symptoms, so a ranking can credit the successor with a
match on its predecessor (``semantic`` does, for the dense rankings).
"""

from __future__ import annotations

import sqlite3

MAX_CHAIN = 32  # versions followed before a chain is given up on (a cycle cannot happen, but is not trusted)

_ROWS = """
    SELECT s.lesson, s.superseded_by, b.text, b.applicability, l.tags, b.symptoms
    FROM lesson_status s JOIN lessons l ON l.id = s.lesson JOIN lesson_bodies b ON b.body_hash = l.body_hash
    WHERE s.state = 'superseded' AND s.superseded_by IS NOT NULL ORDER BY s.lesson
"""


def superseded(conn: sqlite3.Connection) -> list[tuple[str, str, str, str, str, str | None]]:
    """(old lesson, its newest shown successor, text, applicability, tags JSON, symptoms JSON) per superseded
    lesson whose chain ends in a lesson search can show."""
    rows = conn.execute(_ROWS).fetchall()
    nxt = {r[0]: r[1] for r in rows}
    shown = {lesson for (lesson,) in conn.execute(
        "SELECT t.lesson FROM lesson_text t JOIN lesson_status s ON s.lesson = t.lesson "
        "WHERE s.state = 'verified' AND t.lesson IN (SELECT value FROM json_each(?))",
        (_json(set(nxt.values())),))}
    out = []
    for old, successor, *body in rows:
        for _ in range(MAX_CHAIN):
            if successor not in nxt:
                break
            successor = nxt[successor]
        if successor in shown:
            out.append((old, successor, *body))
    return out


def _json(values: set[str]) -> str:
    import json

    return json.dumps(sorted(values))
