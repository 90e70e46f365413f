"""Plan steps reach presence as ``open_steps`` (a count, never the steps' words), so a session that ends with
steps open and no handoff becomes the anchor's dangling work: through the real hook, presence and the tick."""

from __future__ import annotations

from typing import Any

import pytest

from gitive.capture import normalize
from gitive.capture.adapters import ADAPTERS
from testing import live
from testing.anchor import AnchoredTeam, Ticker

TODOS = [{"content": "write the migration", "status": "completed", "activeForm": "Writing the migration"},
         {"content": "run the tests", "status": "in_progress", "activeForm": "Running the tests"},
         {"content": "update the changelog", "status": "pending", "activeForm": "Updating the changelog"}]


@pytest.mark.parametrize(("harness", "tool", "tool_input", "steps", "open_"), [
    ("claude", "TodoWrite", {"todos": TODOS}, 3, 2),
    ("codex", "update_plan", {"plan": [{"step": "a", "status": "completed"}, {"step": "b", "status": "pending"}]},
     2, 1),
    ("gemini", "write_todos", {"todos": [{"description": "a", "status": "cancelled"},
                                         {"description": "b", "status": "in_progress"}]}, 2, 1),
    ("claude", "TodoWrite", {"todos": [dict(t, status="completed") for t in TODOS]}, 3, 0),
])
def test_each_harness_plan_tool_gives_its_open_steps(harness: str, tool: str, tool_input: dict[str, Any],
                                                     steps: int, open_: int) -> None:
    adapter = ADAPTERS[harness]
    name_key, input_key, _ = adapter.tool_fields
    fields = normalize.tool_fields(adapter, {name_key: tool, input_key: tool_input}, None)
    assert fields["plan"] == {"steps": steps, "open": open_}
    assert "plan" not in normalize.tool_fields(adapter, {name_key: "Edit", input_key: {"todos": TODOS}}, None)
    assert "plan" not in normalize.tool_fields(adapter, {name_key: tool, input_key: {"todos": "three"}}, None)


def _todo(machine: Any, session: str, todos: list[dict[str, Any]]) -> None:
    payload = {"session_id": session, "cwd": str(machine.clone), "hook_event_name": "PostToolUse",
               "tool_name": "TodoWrite", "tool_input": {"todos": todos}, "tool_response": {"success": True},
               "tool_use_id": "toolu_plan"}
    live.hook(machine, "post-tool", payload)


def _items(machine: Any) -> dict[str, dict[str, Any]]:
    from gitive.index import ledger
    from gitive.index.refresh import fresh_index
    from gitive.team.hive import open_hive

    machine.ok("sync")
    with live.on(machine), fresh_index(open_hive(machine.clone)) as (conn, _):
        return ledger.item_records(conn)


def _publish(service: Any) -> None:
    """One round of alice's daemon: presence recomputed and published, then a sync."""
    service.refresh_presence(force=True)
    service.sync(only_due=False)


def _end(machine: Any, session: str) -> None:
    live.hook(machine, "session-end", {"session_id": session, "cwd": str(machine.clone),
                                       "hook_event_name": "SessionEnd", "reason": "exit"})


def test_a_session_that_ends_with_open_steps_becomes_dangling_work(team: AnchoredTeam) -> None:
    alice = team.alice
    tick = Ticker(team.anchor)
    with live.serving(alice) as service:
        live.hook(alice, "session-start", live.session_start(alice, "s1"))
        _todo(alice, "s1", TODOS)
        _publish(service)
        [published] = live.published_presence(team.remote, alice)["sessions"]
        assert published["open_steps"] == 2
        assert "changelog" not in str(published)  # a count: the pending steps' words stay on the machine
        tick()  # the anchor sees the session start
        _end(alice, "s1")
        _publish(service)
        assert live.published_presence(team.remote, alice)["sessions"] == []
        tick()
    dangling = [r for r in _items(alice).values() if r["kind"] == "dangling.session"]
    assert [r["owner"] for r in dangling] == ["alice"]
    assert "ended with 2 open plan steps and no handoff" in dangling[0]["title"]


def test_a_session_that_finished_its_plan_leaves_nothing_dangling(team: AnchoredTeam) -> None:
    alice = team.alice
    tick = Ticker(team.anchor)
    with live.serving(alice) as service:
        live.hook(alice, "session-start", live.session_start(alice, "s2"))
        _todo(alice, "s2", TODOS)
        _todo(alice, "s2", [dict(t, status="completed") for t in TODOS])  # the newest plan wins
        _publish(service)
        assert live.published_presence(team.remote, alice)["sessions"][0]["open_steps"] == 0
        tick()
        _end(alice, "s2")
        _publish(service)
        assert live.published_presence(team.remote, alice)["sessions"] == []
        tick()
    assert not [r for r in _items(alice).values() if r["kind"] == "dangling.session"]
