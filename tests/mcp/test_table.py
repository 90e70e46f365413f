"""The tool table: one list, declared once, agreeing with the docs, the README and the library's own limits."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from gitive.mcp import calls, table

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = re.compile(r"approve|reject|retract|remove|invite|join|roster|review|delete|sign", re.IGNORECASE)
READ_ONLY = {"search_memory", "get_lesson", "get_memory_context", "list_team", "who_knows", "owed", "context_for",
             "search_mail"}
EVERY_CALL_WRITES = {"send_message", "propose_item"}
NUMBERS = {"six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
           "fourteen": 14, "fifteen": 15, "sixteen": 16}


def _props(tool: table.Tool) -> dict[str, Any]:
    return tool.inputs["properties"]


def _walk(spec: dict[str, Any], where: str) -> list[tuple[str, dict[str, Any]]]:
    out = [(where, spec)]
    if spec.get("type") == "array":
        out += _walk(spec["items"], where + "[]")
    return out


def test_names_titles_and_hints() -> None:
    names = [t.name for t in table.TOOLS]
    assert len(names) == len(set(names)) == 14
    assert not [n for n in names if FORBIDDEN.search(n)]
    assert len({t.title for t in table.TOOLS}) == len(names) and all(t.title and t.description for t in table.TOOLS)
    assert {t.name for t in table.TOOLS if t.hints.read_only} == READ_ONLY
    assert {t.name for t in table.TOOLS if not t.hints.idempotent} == EVERY_CALL_WRITES
    assert not [t.name for t in table.TOOLS if t.hints.destructive or t.hints.open_world]


@pytest.mark.parametrize("tool", table.TOOLS, ids=lambda t: t.name)
def test_every_argument_is_bounded(tool: table.Tool) -> None:
    assert tool.inputs["type"] == "object" and tool.inputs["additionalProperties"] is False
    assert tool.output["type"] == "object" and tool.output["properties"]
    for name, spec in _props(tool).items():
        assert spec.get("description"), name
        for where, part in _walk(spec, name):
            kind = part["type"]
            if kind == "string":
                assert part["maxLength"] <= 64 * 1024, where
            elif kind == "array":
                assert part["maxItems"] <= 100, where
            elif kind == "integer":
                assert "minimum" in part, where
            else:
                assert kind == "boolean", where


@pytest.mark.parametrize("tool", table.TOOLS, ids=lambda t: t.name)
def test_every_handler_and_text_renderer_resolves(tool: table.Tool) -> None:
    assert callable(calls.handler(tool.call))
    if tool.text:
        assert callable(calls.handler(tool.text))


def test_enums_are_the_librarys() -> None:
    from gitive.core.records import LESSON_KINDS
    from gitive.lessons.model import SCOPES

    spec = _props(table.BY_NAME["propose_lesson"])
    assert tuple(spec["kind"]["enum"]) == LESSON_KINDS
    assert set(spec["scope"]["enum"]) == set(SCOPES)


def test_limits_are_the_librarys() -> None:
    from gitive.anchor.gate import items
    from gitive.anchor.obligations import conditions
    from gitive.core import item_ids, lessons
    from gitive.core.records import MAX_MESSAGE_BODY
    from gitive.daemon import claims
    from gitive.index import obligations
    from gitive.lessons import recall
    from gitive.mcp import shape

    spec = {t.name: _props(t) for t in table.TOOLS}
    lesson = spec["propose_lesson"]
    assert lesson["text"]["maxLength"] == lessons.MAX_TEXT
    assert (lesson["symptoms"]["maxItems"], lesson["symptoms"]["items"]["maxLength"]) == (
        lessons.MAX_SYMPTOMS, lessons.MAX_SYMPTOM)
    assert spec["search_memory"]["rephrasings"]["maxItems"] == recall.MAX_REPHRASINGS
    assert spec["search_memory"]["query"]["maxLength"] == shape.MAX_QUERY
    assert spec["search_memory"]["files"]["maxItems"] == shape.MAX_FILES
    assert spec["send_message"]["text"]["maxLength"] == MAX_MESSAGE_BODY
    claim = spec["claim_files"]
    assert (claim["paths"]["maxItems"], claim["minutes"]["maximum"], claim["note"]["maxLength"]) == (
        claims.MAX_PATHS, claims.MAX_MINUTES, claims.MAX_NOTE)
    assert (spec["propose_item"]["title"]["maxLength"], spec["propose_item"]["about"]["maxItems"]) == (
        item_ids.MAX_TITLE, items.MAX_ABOUT)
    assert spec["owe"]["condition"]["maxLength"] == conditions.MAX_CONDITION
    assert spec["owe"]["action"]["maxLength"] == obligations.MAX_ACTION


def _doc_rows() -> list[tuple[str, list[str]]]:
    """The tool table in docs/mcp.md: each row's tool and its arguments, in order."""
    text = (ROOT / "docs" / "mcp.md").read_text()
    section = text.split("\n## Tools\n", 1)[1].split("\n#", 1)[0]
    rows = [line.split(" | ") for line in section.splitlines() if line.startswith("| `")]
    return [(cells[0].strip("| `"), re.findall(r"`(\w+)`\*?", cells[2])) for cells in rows]


def test_the_docs_table_is_the_tool_table() -> None:
    assert _doc_rows() == [(t.name, list(_props(t))) for t in table.TOOLS]


def test_the_readme_lists_the_tool_table() -> None:
    readme = (ROOT / "README.md").read_text()
    paragraph = readme.split("- **MCP**", 1)[1].split("\n- ", 1)[0]
    listed = [n for n in re.findall(r"`(\w+)`", paragraph) if n not in ("gitive",)]
    assert listed == [t.name for t in table.TOOLS]


@pytest.mark.parametrize("path", ["docs/mcp.md", "README.md", "gitive/mcp", "gitive/cli/mcp.py"])
def test_no_page_counts_the_tools_wrongly(path: str) -> None:
    files = sorted((ROOT / path).glob("*.py")) if (ROOT / path).is_dir() else [ROOT / path]
    for file in files:
        for word in re.findall(r"\b(\w+) (?:MCP )?tools\b", file.read_text(), re.IGNORECASE):
            count = NUMBERS.get(word.lower()) or (int(word) if word.isdigit() else None)
            assert count in (None, len(table.TOOLS)), f"{file.name} speaks of {word} tools"
