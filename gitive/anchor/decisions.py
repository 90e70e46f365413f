"""Person decisions about obligations: recording one, creating one for someone else, done, cancel, renew.

A record a person makes at a terminal carries ``actor: "person"``; readers let a person change any obligation
and record one for someone else, and let an agent act only for its own person (``gitive/index/obligations.py``).
docs/verification.md §3 makes such a decision count only with the person's *gesture* (a signature by the
person's key, which an agent cannot unlock); this is the one place that adds it, so every person decision
about obligations passes through here.
"""

from __future__ import annotations

from typing import Any

from gitive.team.hive import Hive


def person_decision(hive: Hive, kind: str, record: dict[str, Any]) -> dict[str, Any]:
    """The record a person's decision is signed as. Today: as given (``actor: "person"``); the gesture from
    ``gitive/core/gesture.py`` is added here once person keys exist."""
    del hive, kind
    return record
