"""MCP conformance, as a client sees it: the SDK's own client over stdio against a real ``python -m gitive.mcp``,
in both protocol eras (the ``initialize`` handshake harnesses use, and the 2026-07-28 per-request era the SDK's
client opens by default).

For every tool: its listing (title, annotations, input schema with limits, output schema) is the table's; a
real call returns structured content that the ``jsonschema`` library finds valid against the listed output
schema, with the same content as text; each argument of the wrong type, and each over-long one, is a one-line
tool error. Then what the annotations promise: what is idempotent is, what is not is not, and lists page.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest

from gitive.mcp import table
from testing import live
from tests.mcp.conftest import INVOICE_FILE, SESSION_FILE, Team, client, refresh_sessions

pytestmark = pytest.mark.anyio
MODES = ["legacy", "auto"]
MERGED = 'e.event.action == "vcs.merged" && e.vcs.branch == "{branch}"'
WRONG = {"string": 5, "integer": "five", "boolean": "yes", "array": "x"}
MIB = "a" * (1 << 20)


def _text(result: Any) -> str:
    return "".join(block.text for block in result.content if getattr(block, "type", "") == "text")


def _one_line_error(result: Any) -> str:
    text = _text(result)
    assert result.is_error and result.structured_content is None, text
    assert "\n" not in text and 0 < len(text) <= 300, text
    assert "pydantic" not in text and "http" not in text, text
    return text


@pytest.fixture(scope="module")
def me(team: Team) -> str:
    refresh_sessions(team)
    return live.session_address(team.alice, "claude-s1")


def _valid(team: Team, me: str, mode: str) -> dict[str, dict[str, Any]]:
    """Arguments for a successful call of every tool, as alice in her clone."""
    return {
        "search_memory": {"query": "refresh token session cookie", "files": [SESSION_FILE]},
        "get_lesson": {"id": team.session_lesson[:12]},
        "get_memory_context": {"task": "fix the session cookie refresh", "files": [SESSION_FILE]},
        "propose_lesson": {"kind": "Gotcha", "text": f"Conformance ({mode}): invoice PDFs render in UTC.",
                           "evidence": [f"file:{INVOICE_FILE}"], "scope": "project", "tags": ["conformance"]},
        "list_team": {},
        "who_knows": {"files": [SESSION_FILE]},
        "owe": {"to": "bob", "condition": MERGED.format(branch=f"conformance-{mode}"),
                "action": "remove the grace period", "session": me},
        "owed": {"limit": 50},
        "context_for": {"session": me},
        "send_message": {"to": "bob/api-codex", "text": f"conformance ping ({mode})", "session": me},
        "check_inbox": {"session": me},
        "search_mail": {"query": "conformance ping"},
        "claim_files": {"paths": [INVOICE_FILE], "minutes": 5, "note": "conformance", "session": me},
        "propose_item": {"title": f"conformance item ({mode})", "files": [INVOICE_FILE]},
    }


@pytest.mark.parametrize("mode", MODES)
async def test_every_tool_is_listed_as_the_table_declares_it(team: Team, mode: str) -> None:
    async with client(team.alice, mode=mode) as c:
        listed = {t.name: t for t in (await c.list_tools()).tools}
    assert list(listed) == [t.name for t in table.TOOLS]
    for tool in table.TOOLS:
        wire = listed[tool.name]
        assert wire.title == tool.title and wire.annotations and wire.annotations.title == tool.title
        hints = (wire.annotations.read_only_hint, wire.annotations.idempotent_hint,
                 wire.annotations.destructive_hint, wire.annotations.open_world_hint)
        assert hints == (tool.hints.read_only, tool.hints.idempotent, False, False), tool.name
        assert wire.input_schema == tool.inputs and wire.output_schema == tool.output
        jsonschema.Draft202012Validator.check_schema(wire.input_schema)
        jsonschema.Draft202012Validator.check_schema(wire.output_schema)


@pytest.mark.parametrize("mode", MODES)
async def test_every_tool_answers_within_its_output_schema(team: Team, me: str, mode: str) -> None:
    async with client(team.alice, mode=mode) as c:
        schemas = {t.name: t.output_schema for t in (await c.list_tools()).tools}
        for name, args in _valid(team, me, mode).items():
            result = await c.call_tool(name, args)
            assert not result.is_error, (name, _text(result))
            jsonschema.validate(result.structured_content, schemas[name])
            text = _text(result)
            if table.BY_NAME[name].text is None:
                assert json.loads(text) == result.structured_content, name
            else:
                assert text and "{" not in text[:1], name  # frames and cards, not escaped JSON


@pytest.mark.parametrize("mode", MODES)
async def test_each_wrong_type_is_a_one_line_error_naming_the_argument(team: Team, me: str, mode: str) -> None:
    valid = _valid(team, me, mode)
    async with client(team.alice, mode=mode) as c:
        for tool in table.TOOLS:
            for name, spec in tool.inputs["properties"].items():
                args = {**valid[tool.name], name: WRONG[spec["type"]]}
                text = _one_line_error(await c.call_tool(tool.name, args))
                assert text.startswith(f"{tool.name}: {name} must be "), text


async def test_over_long_values_are_refused_in_one_line_and_nothing_is_stored(team: Team, me: str) -> None:
    async with client(team.alice) as c:
        no_lesson = _one_line_error(await c.call_tool("get_lesson", {"id": "f" * 100_000}))
        no_message = _one_line_error(await c.call_tool("send_message", {"to": "bob/api-codex", "text": "hi",
                                                                        "reply_to": "0" * 100_000}))
        path = _one_line_error(await c.call_tool("claim_files", {"paths": [MIB], "session": me}))
        note = _one_line_error(await c.call_tool("claim_files", {"paths": [INVOICE_FILE], "note": MIB,
                                                                 "session": me}))
        session = _one_line_error(await c.call_tool("context_for", {"session": MIB}))
        text = _one_line_error(await c.call_tool("propose_lesson", {"kind": "Gotcha", "text": MIB,
                                                                    "evidence": [f"file:{INVOICE_FILE}"]}))
    assert no_lesson.startswith("get_lesson: no lesson 'ffffffffffff'") and "100,000 characters" in no_lesson
    assert no_message.startswith("send_message: no message")
    assert path == "claim_files: paths[0] is 1,048,576 characters; at most 1,024"
    assert note == "claim_files: note is 1,048,576 characters; at most 200"
    assert session == "context_for: session is 1,048,576 characters; at most 200"
    assert text == "propose_lesson: text is 1,048,576 characters; at most 1,200"
    who = team.alice.ok("who", "--json").out
    assert len(who) < 64 * 1024 and MIB[:1000] not in who


async def test_limits_refuse_out_of_range_and_unknown_arguments(team: Team) -> None:
    async with client(team.alice) as c:
        negative = _one_line_error(await c.call_tool("owed", {"limit": -1}))
        minutes = _one_line_error(await c.call_tool("claim_files", {"paths": ["a"], "minutes": 481}))
        kind = _one_line_error(await c.call_tool("propose_lesson", {"kind": "gotcha", "text": "x",
                                                                    "evidence": ["file:a"]}))
        scope = _one_line_error(await c.call_tool("propose_lesson", {"kind": "Gotcha", "text": "x",
                                                                     "evidence": ["file:a"], "scope": "world"}))
        misspelled = _one_line_error(await c.call_tool("search_memory", {"querry": "x"}))
        with pytest.raises(Exception, match="no tool 'approve_lesson'"):
            await c.call_tool("approve_lesson", {"id": "x"})
    assert negative == "owed: limit must be at least 1, not -1"
    assert minutes == "claim_files: minutes must be at most 480, not 481"
    assert kind.startswith("propose_lesson: kind must be one of Convention, Correction, Gotcha")
    assert scope == "propose_lesson: scope must be one of project, team, personal, not 'world'"
    assert misspelled == "search_memory: unknown argument 'querry' (did you mean query?)"


async def test_owe_twice_is_one_obligation_and_owed_pages_and_counts(team: Team, me: str) -> None:
    promise = {"to": "bob", "condition": MERGED.format(branch="page-test"), "action": "drop the shim"}
    async with client(team.alice, mode="legacy") as c:
        first = (await c.call_tool("owe", promise)).structured_content
        again = (await c.call_tool("owe", promise)).structured_content
        other = (await c.call_tool("owe", {**promise, "action": "drop the second shim"})).structured_content
        everything = (await c.call_tool("owed", {"limit": 50})).structured_content
        one = (await c.call_tool("owed", {"limit": 1})).structured_content
        rest = (await c.call_tool("owed", {"limit": 50, "offset": 1})).structured_content
    assert (first["created"], again["created"], other["created"]) == (True, False, True)
    assert again["id"] == first["id"] != other["id"] and again["expires"] == first["expires"]
    ids = [o["id"] for o in everything["obligations"]]
    assert ids.count(first["id"]) == 1 and other["id"] in ids
    assert everything["total"] == len(ids) == one["total"] == rest["total"] and everything["next_offset"] is None
    assert [o["id"] for o in one["obligations"]] == ids[:1] and one["next_offset"] == 1
    assert [o["id"] for o in rest["obligations"]] == ids[1:]


async def test_a_send_is_not_idempotent_and_a_proposal_is(team: Team, me: str) -> None:
    message = {"to": "bob/api-codex", "text": "two of these", "session": me}
    lesson = {"kind": "Convention", "text": "Idempotence check: billing ids are ULIDs.",
              "evidence": [f"file:{INVOICE_FILE}"]}
    async with client(team.alice) as c:
        sent = [(await c.call_tool("send_message", message)).structured_content["id"] for _ in range(2)]
        proposed = [(await c.call_tool("propose_lesson", lesson)).structured_content for _ in range(2)]
    assert sent[0] != sent[1]
    assert proposed[0]["id"] == proposed[1]["id"] and (proposed[0]["created"], proposed[1]["created"]) == (
        True, False)
