"""Stuck signatures and rescue: a session repeating a failing command three times (Claude Code hook payloads)
publishes only the signature's hash; the anchor sends it the verified lesson that carries the signature, once,
and the session gets it at its next turn. Unit properties of the signature rules come first."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from gitive.daemon import stuck
from testing import live
from testing import prepared as prep
from testing.anchor import AnchoredTeam

COMMAND = "python3 check_calc.py"
OUTPUT = "Traceback (most recent call last):\nAssertionError: add is wrong"


def _run(ts: int, code: int, command: str = COMMAND, session: str = "s1") -> dict[str, Any]:
    return {"ts": ts, "event": {"action": "tool.completed"}, "harness": {"name": "claude"},
            "session": {"id": session}, "command": {"command": command, "exit_code": code},
            "output": {"text": OUTPUT if code else "ok"}}


def _edit(ts: int) -> dict[str, Any]:
    return {"ts": ts, "event": {"action": "tool.completed"}, "file": {"op": "modify", "paths": ["calc.py"]}}


def _signature() -> str:
    from gitive.learn.pairs import signature

    return signature(COMMAND, "", "AssertionError")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["fail", "pass", "edit", "other"]), st.integers(1, 10 * 60_000)),
                max_size=12))
def test_stuck_means_three_same_failures_within_15_minutes_with_no_edit_between(steps: list[tuple[str, int]]
                                                                                ) -> None:
    events, ts = [], 0
    streak: list[int] = []
    expect_stuck, expect_passed = False, False
    for kind, gap in steps:
        ts += gap
        if kind == "fail":
            events.append(_run(ts, 1))
            streak = [t for t in streak if ts - t <= stuck.WINDOW_MS] + [ts]
            expect_stuck = expect_stuck or len(streak) >= 3
        elif kind == "pass":
            events.append(_run(ts, 0))
            expect_passed = expect_passed or expect_stuck
            expect_stuck, streak = False, []
        elif kind == "edit":
            events.append(_edit(ts))
            streak = []
        else:
            events.append(_run(ts, 1, command="python3 other.py"))
    found, passed = stuck.in_session(events, "claude:s1")
    assert (_signature() in found) == expect_stuck
    assert (_signature() in passed) == expect_passed
    assert all(len(s) == 24 and s.isalnum() for s in found if not s.startswith(stuck.TURNS_PREFIX))  # hashes only


def _bash(machine: Any, session: str, n: int) -> dict[str, Any]:
    return {"session_id": session, "cwd": str(machine.clone), "hook_event_name": "PostToolUse", "tool_name": "Bash",
            "tool_input": {"command": COMMAND}, "tool_response": {"stdout": OUTPUT, "exit_code": 1},
            "tool_use_id": f"toolu_stuck{n}"}


def _rescues(team: AnchoredTeam) -> list[dict[str, Any]]:
    from gitive.store import logs, refs

    return [e.body["record"] for e in logs.entries(team.anchor.repo, refs.log_ref(team.anchor.id, "mail"))
            if e.kind == "message" and e.body["record"]["from"] == "anchor/rescue"]


def test_a_session_repeating_a_failing_command_gets_the_verified_lesson_with_its_signature(team: AnchoredTeam
                                                                                         ) -> None:
    prep.buggy_project(team.bob)
    team.alice.git("pull", "--quiet", "--ff-only", "origin", "main")
    sig = _signature()
    made = team.bob.json("lessons", "propose", "--kind", "Gotcha", "--text", "check_calc fails with "
                         "AssertionError when add subtracts: fix calc.add, not the check", "--evidence",
                         "commit:HEAD", "--tag", f"signature:{sig}")
    team.bob.ok("sync")
    team.alice.ok("sync")
    team.alice.decided("review", "approve", made["id"])
    team.alice.ok("sync")
    live.hook(team.alice, "session-start", live.session_start(team.alice, "s-stuck"))
    for n in range(3):
        live.hook(team.alice, "post-tool", _bash(team.alice, "s-stuck", n))
    live.publish_and_sync(team.alice)
    published = live.published_presence(team.remote, team.alice)
    [session] = [s for s in published["sessions"] if s.get("stuck")]
    assert session["stuck"] == [sig] and COMMAND not in json.dumps(published)  # only the hash left the machine
    tick = prep.ticker(team)
    tick()
    [rescue] = _rescues(team)
    assert made["id"][:12] in rescue["body"] and [r["session"] for r in rescue["recipients"]] == [session["name"]]
    tick()
    assert len(_rescues(team)) == 1  # once per pointer
    with live.serving(team.alice) as service:
        service.sync(only_due=False)
        frame = live.context_of(live.hook(team.alice, "post-tool", live.read(team.alice, "s-stuck")))
    assert frame is not None and made["id"][:12] in frame and "anchor/rescue" in frame


def test_a_session_eight_turns_without_a_change_gets_the_lesson_about_its_files(team: AnchoredTeam) -> None:
    prep.buggy_project(team.bob)
    team.alice.git("pull", "--quiet", "--ff-only", "origin", "main")
    made = team.bob.json("lessons", "propose", "--kind", "Gotcha", "--text", "calc.add is checked only by "
                         "check_calc.py; read it before changing calc.py", "--evidence", "file:calc.py")
    other = team.bob.json("lessons", "propose", "--kind", "Gotcha", "--text", "the README is generated",
                          "--evidence", "file:check_calc.py")
    team.bob.ok("sync")
    team.alice.ok("sync")
    team.alice.decided("review", "approve", made["id"])
    team.alice.ok("sync")
    live.hook(team.alice, "session-start", live.session_start(team.alice, "s-turns"))
    live.hook(team.alice, "post-tool", live.read(team.alice, "s-turns", "calc.py"))
    for _ in range(stuck.TURNS):
        live.hook(team.alice, "prompt", {"session_id": "s-turns", "cwd": str(team.alice.clone),
                                         "hook_event_name": "UserPromptSubmit", "prompt": "why does add fail?"})
        live.hook(team.alice, "stop", live.stop(team.alice, "s-turns"))
    live.publish_and_sync(team.alice)
    [session] = [s for s in live.published_presence(team.remote, team.alice)["sessions"] if s.get("stuck")]
    [signature] = session["stuck"]
    assert signature.startswith(stuck.TURNS_PREFIX) and signature.isalnum()
    prep.ticker(team)()
    [rescue] = _rescues(team)
    assert "8 turns without changing a file" in rescue["body"] and made["id"][:12] in rescue["body"]
    assert other["id"][:12] not in rescue["body"]  # not verified, and not about calc.py
    assert [r["session"] for r in rescue["recipients"]] == [session["name"]]
