"""The shapes the two search tools return, declared as their MCP ``outputSchema``.

MCP (2025-06-18 and later) asks a tool with structured content to declare it. The SDK turns these types into
the schema and validates every structured result against it, so the declaration cannot drift from the data.
"""

from __future__ import annotations

from typing import NotRequired  # pydantic needs this TypedDict on Python < 3.12

from typing_extensions import TypedDict


class Lesson(TypedDict):
    """One lesson as the memory tools return it (``gitive.mcp.shape.lesson``)."""

    id: str
    kind: str
    state: str
    verified: bool
    scope: str
    author: str
    reviewer: str | None
    age_days: float
    label: str | None
    text: str
    applicability: str
    tags: list[str]
    files: list[str]
    stale: list[str]
    frame: str | None
    score: NotRequired[float | None]
    reasons: NotRequired[list[str]]


class Search(TypedDict):
    """``search_memory``: one page of lessons, best first, and where the next page starts."""

    query: str
    rephrasings: list[str]
    files: list[str]
    include_proposed: bool
    results: list[Lesson]
    offset: int
    next_offset: int | None
    note: str


class More(TypedDict):
    id: str
    summary: str


class Context(TypedDict):
    """``get_memory_context``: the session card, the lessons framed in it, and one-line summaries of more."""

    task: str
    files: list[str]
    card: str
    lessons: list[Lesson]
    more: list[More]
