"""Short text helpers for messages about lessons."""

from __future__ import annotations


def first_line(text: str | None, width: int = 90) -> str:
    if not text:
        return "(no text here)"
    line = text.strip().splitlines()[0]
    return line if len(line) <= width else line[: width - 1] + "…"
