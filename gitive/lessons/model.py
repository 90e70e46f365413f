"""The lesson body and where a lesson of each scope is written."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from gitive.core import canonical
from gitive.core.lessons import MAX_SYMPTOM, MAX_SYMPTOMS, MAX_TEXT, body_hash, lesson_id

if TYPE_CHECKING:
    from gitive.store.types import Repo

__all__ = ["MAX_SYMPTOM", "MAX_SYMPTOMS", "MAX_TEXT", "SCOPES", "Placement", "body", "body_bytes", "body_hash",
           "lesson_id"]

SCOPES = ("personal", "project", "team")


def body(text: str, applicability: str, quote: dict[str, Any] | None,
         symptoms: list[str] | None = None) -> dict[str, Any]:
    """The body blob's fields; ``symptoms`` (body format 2) only when there are some, so a body without them
    has exactly the bytes, and the hash, it had before symptoms existed."""
    out: dict[str, Any] = {"text": text, "applicability": applicability, "quote": quote}
    if symptoms:
        out["symptoms"] = list(symptoms)
    return out


def body_bytes(lesson_body: dict[str, Any]) -> bytes:
    return canonical.dumps(lesson_body)


class Placement(NamedTuple):
    """Where a record of a given scope is written: which store, which log, and the entry's scope."""

    repo: Repo
    log: str
    scope: dict[str, Any]
    audience: str  # who can read it, said plainly
    sealed: bool = False  # records and bodies are encrypted to the scope's machines (docs/scopes.md)
