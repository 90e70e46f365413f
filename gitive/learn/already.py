"""Before a draft is offered: does a verified lesson already say it?

A draft that repeats a verified lesson is noise to the person reviewing it and, accepted, a duplicate in every
agent's recall. So each new draft is searched for among the verified lessons of its repository (the same
``recall.search`` agents use, with the draft's error line or quoted words and its files); when the best match
already says it (it quotes the same error line, or holds most of the draft's telling words), the draft is
marked with that lesson and the review offers to add this session's evidence to it or to supersede it, not to
propose a second lesson.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from gitive.index.words import tokens

MIN_SHARE = 0.6  # of the draft's telling words the lesson must hold ...
MIN_WORDS = 3  # ... and at least this many of them


def _normal(text: str) -> str:
    return " ".join(text.lower().split())


def telling(draft: dict[str, Any]) -> str:
    """What the draft says that a lesson would have to say too: its error line or the person's words."""
    detail = draft.get("detail") or {}
    return str(detail.get("error_line") or detail.get("sentence") or draft.get("text", ""))


def says_it(found: dict[str, Any], said: str) -> bool:
    """Whether lesson ``found`` (a ``recall.search`` result) already says ``said``."""
    held = " ".join([found.get("text", ""), found.get("applicability", ""), *found.get("symptoms", [])])
    if len(said) >= 12 and _normal(said) in _normal(held):
        return True
    wanted = set(tokens(said, limit=64))
    if len(wanted) < MIN_WORDS:
        return False
    return len(wanted & set(tokens(held, limit=400))) >= max(MIN_WORDS, MIN_SHARE * len(wanted))


def check(draft: dict[str, Any]) -> dict[str, Any]:
    """``{"lesson", "text", "offer"}`` naming the verified lesson that already says the draft, ``{}`` when
    none does, or ``{"problem"}`` when the repository's lessons could not be searched (never silent)."""
    from gitive.errors import GitiveError
    from gitive.index.refresh import fresh_index
    from gitive.lessons.recall import search
    from gitive.team.hive import open_hive

    said = telling(draft)
    try:
        hive = open_hive(draft.get("repo") or None)
        with fresh_index(hive) as (conn, _):
            hits = search(conn, said, files=list(draft.get("files", [])), project=hive.project_id,
                          limit=3, repo=hive.project)
            symptoms = {h["id"]: _symptoms(conn, h["id"]) for h in hits}
    except (GitiveError, OSError, sqlite3.Error) as exc:
        return {"problem": f"verified lessons not searched: {' '.join(str(exc).split())[:160]}"}
    for hit in hits:
        if hit.get("verified") and says_it({**hit, "symptoms": symptoms[hit["id"]]}, said):
            return {"lesson": hit["id"], "text": hit["text"][:300],
                    "offer": "add this session's evidence to it, or supersede it"}
    return {}


def _symptoms(conn: Any, lesson: str) -> list[str]:
    import json

    row = conn.execute("SELECT b.symptoms FROM lesson_text t JOIN lesson_bodies b ON b.body_hash = t.body_hash "
                       "WHERE t.lesson = ?", (lesson,)).fetchone()
    return list(json.loads(row[0])) if row and row[0] else []
