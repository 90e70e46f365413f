"""Lesson ids, body hashes and the symptom limits (DESIGN §4): pure functions every layer agrees on."""

from __future__ import annotations

from typing import Any

from gitive.core import canonical
from gitive.core.ids import blake3_hex, record_id

MAX_TEXT = 1200
MAX_SYMPTOMS = 8  # how the problem shows up: error lines, the questions the lesson answers
MAX_SYMPTOM = 300


def lesson_id(author: str, scope: dict[str, Any], kind: str, text: str, applicability: str,
              quote: dict[str, Any] | None, evidence: list[dict[str, Any]],
              symptoms: list[str] | None = None) -> str:
    """Same author, scope and content give the same id: an identical proposal is one lesson.

    Symptoms join the id only when there are some, so every lesson written before they existed (and every
    lesson without them) keeps the id it always had. No score or ranking figure is ever part of an id.
    """
    if symptoms:
        return record_id(author, scope, kind, text, applicability, quote, evidence, symptoms)
    return record_id(author, scope, kind, text, applicability, quote, evidence)


def body_hash(lesson: str, lesson_body: dict[str, Any]) -> str:
    """Covers the body together with the lesson id, so two lessons never share a body."""
    return blake3_hex(canonical.dumps([lesson, lesson_body]))
