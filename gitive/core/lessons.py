"""Lesson ids and body hashes (DESIGN §4): pure functions every layer agrees on."""

from __future__ import annotations

from typing import Any

from gitive.core import canonical
from gitive.core.ids import blake3_hex, record_id

MAX_TEXT = 1200


def lesson_id(author: str, scope: dict[str, Any], kind: str, text: str, applicability: str,
              quote: dict[str, Any] | None, evidence: list[dict[str, Any]]) -> str:
    """Same author, scope and content give the same id: an identical proposal is one lesson."""
    return record_id(author, scope, kind, text, applicability, quote, evidence)


def body_hash(lesson: str, lesson_body: dict[str, Any]) -> str:
    """Covers the body together with the lesson id, so two lessons never share a body."""
    return blake3_hex(canonical.dumps([lesson, lesson_body]))
