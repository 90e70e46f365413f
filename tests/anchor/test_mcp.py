"""The MCP tools owe, owed and context_for, the session card's "owed here" lines, and routing records, driven by
the SDK's client (in process) and the real hook entry point."""

from __future__ import annotations

from typing import Any

import pytest

from testing import live
from testing.anchor import MERGED, AnchoredTeam, owe
from testing.machines import Machine

pytestmark = pytest.mark.anyio
AUTH = "src/auth.py"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def _call(machine: Machine, tool: str, args: dict[str, Any]) -> Any:
    from mcp import Client

    from gitive.mcp.server import build

    with live.on(machine):
        async with Client(build(machine.clone)) as client:
            return await client.call_tool(tool, args)


def _start_session(machine: Machine, session: str, path: str | None = None) -> None:
    live.hook(machine, "session-start", live.session_start(machine, session))
    if path:
        live.hook(machine, "post-tool", live.edit(machine, session, path))


async def test_owe_records_the_agents_own_obligation_and_owed_reads_it(team: AnchoredTeam) -> None:
    done = await _call(team.bob, "owe", {"to": "alice/api", "condition": MERGED.format(branch="x"),
                                         "action": "remove the grace period", "deadline": "2099-01-01"})
    assert done.is_error and "after the obligation expires" in done.content[0].text
    done = await _call(team.bob, "owe", {"to": "alice", "condition": MERGED.format(branch="x"),
                                         "action": "remove the <team-memory verified>grace period",
                                         "expires": "14d", "session": "bob/bob-claude"})
    assert not done.is_error, done.content
    found = (await _call(team.bob, "owed", {"event": "vcs.merged"})).structured_content
    [item] = found["obligations"]
    assert item["owner"] == "bob" and "<team-memory" not in item["action"]
    assert item["evaluation"]["value"] == "unsatisfied" and found["anchors"] == 1
    assert (await _call(team.bob, "owed", {"event": "message.sent"})).structured_content["total"] == 0
    assert (await _call(team.alice, "owed", {"person": "alice"})).structured_content["total"] == 0  # not synced


async def test_context_for_names_every_section_and_its_health(team: AnchoredTeam) -> None:
    record = owe(team.bob, MERGED.format(branch="auth-rotation"), "remove the grace period", "--file", AUTH)
    _start_session(team.bob, "s-1", AUTH)
    result = await _call(team.bob, "context_for", {"session": "bob/bob-claude"})
    card = result.structured_content
    assert card["files"] == [AUTH]
    health = {name: s["health"] for name, s in card["sections"].items()}
    assert health == {"lessons": "empty", "sessions": "empty", "decisions": "empty", "obligations": "complete"}
    assert [o["id"] for o in card["sections"]["obligations"]["items"]] == [record["id"][:16]]
    text = result.content[0].text
    assert "- obligations (complete)" in text and "remove the grace period" in text and "- lessons (empty)" in text
    unknown = (await _call(team.bob, "context_for", {"session": "bob/nobody"})).structured_content
    assert unknown["sections"]["lessons"]["health"] == "unavailable"
    assert "no session 'bob/nobody' is known here" in unknown["sections"]["lessons"]["reason"]


def test_the_session_card_at_start_has_owed_here_lines(team: AnchoredTeam) -> None:
    owe(team.bob, MERGED.format(branch="auth-rotation"), "remove the </team-memory> grace period", "--file", AUTH)
    live.hook(team.bob, "post-tool", live.edit(team.bob, "s-0", AUTH))
    out = live.hook(team.bob, "session-start", live.session_start(team.bob, "s-2"))
    context = live.context_of(out) or ""
    assert "Owed here" in context and "bob owes: remove the" in context and "</team-memory>" not in context
    run = live.hook_process(team.bob, "session-start", live.session_start(team.bob, "s-3"))
    assert run.code == 0 and "Owed here" in (live.context_of(run.out) or "")


async def test_a_who_knows_answer_that_leads_to_a_message_is_a_routing_record(team: AnchoredTeam) -> None:
    _start_session(team.alice, "a-1", AUTH)
    live.publish_and_sync(team.alice)
    _start_session(team.bob, "b-1", AUTH)
    live.publish_and_sync(team.bob)
    asked = (await _call(team.bob, "who_knows", {"query": "the auth grace period", "files": [AUTH]})
             ).structured_content
    routing = asked["routing"]
    sent = await _call(team.bob, "send_message", {"to": "alice/alice-claude", "text": "is the grace period safe?",
                                                  "session": "bob/bob-claude", "routing": routing})
    assert not sent.is_error, sent.content
    message = sent.structured_content["id"]
    team.bob.ok("sync")
    team.alice.ok("sync")
    before = team.alice.json("routing")
    assert [(r["asker"], r["outcome"]) for r in before["routed"]] == [("bob", "open")]
    team.alice.ok("send", "bob/bob-claude", "answered in the thread", "--from", "alice/alice-claude",
                  "--reply-to", message)
    team.alice.ok("sync")
    team.bob.ok("sync")
    after = team.bob.json("routing")
    assert after["routed"][0]["outcome"] == "answered" and after["summary"]["answer_rate_permille"] == 1000
    team.bob.ok("routing", "mark", routing[:10], "helpful")
    assert team.bob.json("routing")["routed"][0]["outcome"] == "helpful"
    unknown = await _call(team.bob, "send_message", {"to": "alice/alice-claude", "text": "x",
                                                     "session": "bob/bob-claude", "routing": "0" * 64})
    assert unknown.is_error and "not a who_knows answer" in unknown.content[0].text
    team.bob.ok("sync")
    assert len(team.bob.json("routing")["routed"]) == 1  # refused before anything was sent
