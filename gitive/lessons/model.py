"""The lesson body and where a lesson of each scope is written."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from gitive.core import canonical
from gitive.core.lessons import MAX_TEXT, body_hash, lesson_id

if TYPE_CHECKING:
    import pygit2

__all__ = ["MAX_TEXT", "SCOPES", "Placement", "body", "body_bytes", "body_hash", "lesson_id"]

SCOPES = ("personal", "project", "team")


def body(text: str, applicability: str, quote: dict[str, Any] | None) -> dict[str, Any]:
    return {"text": text, "applicability": applicability, "quote": quote}


def body_bytes(lesson_body: dict[str, Any]) -> bytes:
    return canonical.dumps(lesson_body)


class Placement(NamedTuple):
    """Where a record of a given scope is written: which store, which log, and the entry's scope."""

    repo: pygit2.Repository
    log: str
    scope: dict[str, Any]
    audience: str  # who can read it, said plainly
