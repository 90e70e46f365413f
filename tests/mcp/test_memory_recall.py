"""The memory tools' recall features over the real stdio server: rephrasings, symptoms, declared output schemas."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from tests.mcp.conftest import Team, client

pytestmark = pytest.mark.anyio


async def test_both_search_tools_declare_the_schema_their_results_follow(team: Team) -> None:
    async with client(team.alice) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        for name, args in (("search_memory", {"query": "refresh token session cookie"}),
                           ("get_memory_context", {"task": "rotate the session cookie"})):
            schema = tools[name].output_schema
            assert schema and schema["type"] == "object", name
            result = await c.call_tool(name, args)
            assert not result.is_error
            jsonschema.validate(result.structured_content, schema)
        assert "rephrasings" in tools["search_memory"].input_schema["properties"]
        assert "symptoms" in tools["propose_lesson"].input_schema["properties"]


async def test_a_rephrasing_finds_what_the_question_misses(team: Team) -> None:
    async with client(team.alice) as c:
        plain = await c.call_tool("search_memory", {"query": "people remain signed in forever"})
        fused = await c.call_tool("search_memory", {"query": "people remain signed in forever",
                                                    "rephrasings": ["refresh token reissued session cookie"]})
    first: Any = fused.structured_content
    assert first["rephrasings"] == ["refresh token reissued session cookie"]
    assert first["results"][0]["id"] == team.session_lesson
    assert team.session_lesson not in [r["id"] for r in plain.structured_content["results"][:1]]


async def test_propose_with_symptoms_then_find_it_by_a_symptom(team: Team) -> None:
    async with client(team.bob) as c:
        made = await c.call_tool("propose_lesson", {
            "kind": "Gotcha", "text": "The proto cache must be cleared after a rename.",
            "evidence": ["file:api.proto"], "symptoms": ["protoc: error: ENOENT cached descriptor"]})
        assert not made.is_error, made
        found = await c.call_tool("search_memory", {"query": "ENOENT cached descriptor", "include_proposed": True})
        too_many = await c.call_tool("propose_lesson", {"kind": "Gotcha", "text": "x", "evidence": ["file:api.proto"],
                                                        "symptoms": [f"s{n}" for n in range(9)]})
    lesson = made.structured_content["id"]
    assert lesson in [r["id"] for r in found.structured_content["results"]]
    assert too_many.is_error and "at most 8" in too_many.content[0].text
