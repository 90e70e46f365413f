"""``gitive-hook <harness> <event>`` as a harness runs it: recorded payloads in, exact stdout out, exit 0.

Every test runs the installed console script in a new process with only ``GITIVE_HOME``, ``HOME`` and ``PATH``
(no agent variables), feeding it a payload recorded in that harness's own shape (``fixtures/<harness>/``,
sources in ``docs/hooks.md``) with the test repository's path substituted. The index it reads is a real one
(``conftest.team_repo``): two verified lessons and three proposed ones.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gitive.capture import events

from .support import NO_OPINION, TeamRepo, claude_shape, cursor_shape, feed, payload, payload_text, run_hook

SESSION_START_SHAPES = {
    "claude": lambda ctx: claude_shape("SessionStart", ctx),
    "codex": lambda ctx: claude_shape("SessionStart", ctx),
    "cursor": cursor_shape,
    "gemini": lambda ctx: claude_shape("SessionStart", ctx),
}
POST_TOOL_SHAPES = {
    "claude": lambda ctx: claude_shape("PostToolUse", ctx),
    "codex": lambda ctx: claude_shape("PostToolUse", ctx),
    "cursor": cursor_shape,
    "gemini": lambda ctx: claude_shape("AfterTool", ctx),
}
# An edit of src/app/settings.py, in each harness's own tool: Edit, apply_patch, Write, replace.
EDITS = {"claude": "post-tool-edit", "codex": "post-tool-apply-patch", "cursor": "post-tool-write",
         "gemini": "post-tool-replace"}
FORBIDDEN = ('"allow"', '"approve"', "permissionDecision", '"permission"', '"continue"')


def recorded(action: str) -> list[dict[str, Any]]:
    return list(events.read(actions=(action,)))


def assert_answer(run: Any, expected: str) -> None:
    assert run.code == 0, run.err
    assert run.out == expected, f"stdout {run.out!r}\nstderr {run.err}"
    for word in FORBIDDEN:
        assert word not in run.out


# --------------------------------------------------------------------------------------- session start


@pytest.mark.parametrize("harness", sorted(SESSION_START_SHAPES))
def test_session_start_prints_the_card_of_verified_lessons(team_repo: TeamRepo, harness: str) -> None:
    run = feed(harness, "session-start", "session-start", team_repo.path)
    assert_answer(run, SESSION_START_SHAPES[harness](team_repo.card()))
    for lesson in team_repo.unverified:
        assert lesson.short not in run.out and lesson.text not in run.out
    injected = recorded("team.lesson.injected")
    assert [e["lesson"]["id"] for e in injected] == [team_repo.migrate.id, team_repo.settings.id]
    assert {e["delivery"]["hook"] for e in injected} == {"session-start"}
    assert {e["harness"]["name"] for e in injected} == {harness}
    [start] = recorded("session.start")
    assert start["session"]["working_directory"] == str(team_repo.path)
    assert start["vcs"]["repository"] == str(team_repo.path)


def test_session_start_twice_in_one_session_does_not_repeat_the_card(team_repo: TeamRepo) -> None:
    assert feed("claude", "session-start", "session-start", team_repo.path).out != NO_OPINION
    assert_answer(feed("claude", "session-start", "session-start", team_repo.path), NO_OPINION)


def test_session_start_in_a_repository_without_gitive_has_no_opinion(git_repo: Path) -> None:
    text = payload_text("claude", "session-start", git_repo)
    assert_answer(run_hook("claude", "session-start", stdin=text.encode()), NO_OPINION)
    assert len(recorded("session.start")) == 1  # recorded all the same


def test_session_start_outside_any_repository_has_no_opinion(tmp_path: Path) -> None:
    assert_answer(feed("claude", "session-start", "session-start", tmp_path), NO_OPINION)


# ------------------------------------------------------------------------------------------- post tool


@pytest.mark.parametrize("harness", sorted(EDITS))
def test_edit_of_a_cited_file_injects_the_lesson_once_per_session(team_repo: TeamRepo, harness: str) -> None:
    first = feed(harness, "post-tool", EDITS[harness], team_repo.path)
    assert_answer(first, POST_TOOL_SHAPES[harness](team_repo.settings.frame()))
    assert team_repo.unreviewed_settings.text not in first.out  # cites the same file, never reviewed
    second = feed(harness, "post-tool", EDITS[harness], team_repo.path)
    assert_answer(second, NO_OPINION)
    [injected] = recorded("team.lesson.injected")
    assert injected["lesson"] == {"id": team_repo.settings.id}
    assert injected["delivery"] == {"tier": "turn", "hook": "post-tool", "via": "computed"}  # no daemon: this call chose it
    tools = recorded("tool.completed")
    assert len(tools) == 2
    assert all(t["file"] == {"paths": ["src/app/settings.py"], "op": "modify"} for t in tools)
    if harness != "gemini":  # Gemini's AfterTool carries no call id: its events are ided by content and time
        assert tools[0]["event"]["id"] == tools[1]["event"]["id"]  # one tool call reported twice: one id


def test_edit_card_then_tool_does_not_show_a_card_lesson_again(team_repo: TeamRepo) -> None:
    assert feed("claude", "session-start", "session-start", team_repo.path).out != NO_OPINION
    assert_answer(feed("claude", "post-tool", "post-tool-edit", team_repo.path), NO_OPINION)


@pytest.mark.parametrize(("harness", "name"), [("codex", "post-tool-bash-failed"),
                                               ("cursor", "post-tool-shell-failed")])
def test_failing_command_whose_error_matches_a_lesson_injects_it(team_repo: TeamRepo, harness: str,
                                                                 name: str) -> None:
    run = feed(harness, "post-tool", name, team_repo.path)
    assert_answer(run, POST_TOOL_SHAPES[harness](team_repo.migrate.frame()))
    [tool] = recorded("tool.completed")
    assert tool["command"] == {"command": "alembic upgrade head", "exit_code": 1}
    assert "Multiple head revisions" in tool["output"]["text"]
    assert [e["lesson"]["id"] for e in recorded("team.lesson.injected")] == [team_repo.migrate.id]


@pytest.mark.parametrize(("event", "hook"), [("post-tool-failure", "PostToolUseFailure"), ("post-tool", "PostToolUse")])
def test_claude_failed_command_matches_a_lesson(team_repo: TeamRepo, event: str, hook: str) -> None:
    run = feed("claude", event, "post-tool-failure", team_repo.path)  # Claude Code's PostToolUseFailure payload
    assert_answer(run, claude_shape(hook, team_repo.migrate.frame()))
    [tool] = recorded("tool.completed")
    assert tool["command"] == {"command": "alembic upgrade head", "exit_code": 1}


def test_gemini_failed_command_matches_a_lesson(team_repo: TeamRepo) -> None:
    run = feed("gemini", "post-tool", "post-tool-shell-failed", team_repo.path)
    assert_answer(run, claude_shape("AfterTool", team_repo.migrate.frame()))


def test_error_matching_only_an_unreviewed_lesson_has_no_opinion(team_repo: TeamRepo) -> None:
    run = feed("codex", "post-tool", "post-tool-bash-segfault", team_repo.path)
    assert_answer(run, NO_OPINION)
    [tool] = recorded("tool.completed")
    assert tool["command"]["exit_code"] == 139
    assert recorded("team.lesson.injected") == []


@pytest.mark.parametrize(("harness", "event", "name"), [
    ("claude", "post-tool", "post-tool-write"),  # cites only an unreviewed lesson
    ("claude", "post-tool", "post-tool-read"),  # idem
    ("claude", "post-tool", "post-tool-bash-ok"),
    ("claude", "stop", "stop"),
    ("claude", "stop", "stop-active"),
    ("claude", "session-end", "session-end"),
    ("codex", "post-tool", "post-tool-bash-ok"),
    ("codex", "stop", "stop"),
    ("cursor", "post-tool", "post-tool-shell-ok"),
    ("cursor", "stop", "stop"),
    ("gemini", "session-end", "session-end"),
])
def test_nothing_to_say_is_the_no_opinion_reply(team_repo: TeamRepo, tmp_path: Path, harness: str, event: str,
                                                name: str) -> None:
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text('{"type":"assistant","message":"done"}\n')
    run = run_hook(harness, event, stdin=payload_text(harness, name, team_repo.path,
                                                      transcript=str(transcript)).encode())
    assert_answer(run, NO_OPINION)
    assert recorded("team.lesson.injected") == []
    [event_written] = [e for e in events.read() if e["event"]["action"] != "lesson.cited"]
    assert event_written["harness"]["name"] == harness


# -------------------------------------------------------------------------------- prompt-time recall


def prompt(harness: str, repo: Path, text: str, session: str | None = None) -> Any:
    body = payload(harness, "prompt", repo) | {"prompt": text}
    if session:
        body["session_id"] = session
    return run_hook(harness, "prompt", stdin=json.dumps(body).encode())


@pytest.mark.parametrize("harness", ["claude", "codex", "gemini"])
def test_a_prompt_gets_the_lesson_its_words_call_for_once_per_session(team_repo: TeamRepo, harness: str) -> None:
    text = "The settings tests fail after I change SETTINGS_PATH, can you look?"
    hook = "BeforeAgent" if harness == "gemini" else "UserPromptSubmit"
    assert_answer(prompt(harness, team_repo.path, text), claude_shape(hook, team_repo.settings.frame()))
    assert_answer(prompt(harness, team_repo.path, text), NO_OPINION)  # shown once in a session
    assert [e["lesson"]["id"] for e in recorded("team.lesson.injected")] == [team_repo.settings.id]
    assert recorded("team.lesson.injected")[0]["delivery"]["hook"] == "prompt"


def test_a_prompt_naming_a_cited_file_gets_that_files_lesson(team_repo: TeamRepo) -> None:
    run = prompt("claude", team_repo.path, "have a look at src/db/migrate.py before we ship")
    assert_answer(run, claude_shape("UserPromptSubmit", team_repo.migrate.frame()))


@pytest.mark.parametrize("text", ["say hi", "thanks!", "libquux frobnicator segmentation fault again",
                                  "what does this repository do?"])
def test_a_prompt_without_a_real_match_gets_nothing(team_repo: TeamRepo, text: str) -> None:
    assert_answer(prompt("claude", team_repo.path, text), NO_OPINION)  # (the libquux lesson is unreviewed)
    assert recorded("team.lesson.injected") == []


# ---------------------------------------------------------------------------------- what the log holds


def test_tool_events_hold_relative_paths_op_and_exit_code(team_repo: TeamRepo) -> None:
    feed("codex", "post-tool", "post-tool-apply-patch", team_repo.path)
    feed("claude", "post-tool", "post-tool-read", team_repo.path)
    feed("codex", "post-tool", "post-tool-bash-ok", team_repo.path)
    patch, read, bash = recorded("tool.completed")
    assert patch["file"] == {"paths": ["src/app/settings.py"], "op": "modify"}
    assert patch["tool"] == {"name": "apply_patch", "call_id": "call_Qm4v8ZbX2nL7pR1tK9sD3fHw"}
    assert patch["turn"] == {"id": "1"}
    assert read["file"] == {"paths": ["src/app/views.py"], "op": "read"}
    assert read["session"] == {"id": "8f3c1a52-6b0e-4d7a-9c41-2f5e8b7d1a90",
                               "working_directory": str(team_repo.path)}
    assert bash["command"] == {"command": "ls src", "exit_code": 0}
    assert "file" not in bash


def test_a_shown_lesson_named_in_a_tool_call_is_recorded_as_cited(team_repo: TeamRepo) -> None:
    feed("claude", "session-start", "session-start", team_repo.path)
    feed("claude", "post-tool", "post-tool-bash-cite", team_repo.path, lesson=team_repo.settings.short[:12])
    feed("claude", "post-tool", "post-tool-bash-cite", team_repo.path, lesson=team_repo.settings.short[:12])
    [cited] = recorded("lesson.cited")
    assert cited["lesson"] == {"id": team_repo.settings.id}
    assert cited["session"]["id"] == "8f3c1a52-6b0e-4d7a-9c41-2f5e8b7d1a90"


def test_a_lesson_never_shown_is_not_cited(team_repo: TeamRepo) -> None:
    feed("claude", "post-tool", "post-tool-bash-cite", team_repo.path, lesson=team_repo.settings.short)
    assert recorded("lesson.cited") == []


def test_stop_reads_citations_from_the_transcript(team_repo: TeamRepo, tmp_path: Path) -> None:
    feed("claude", "session-start", "session-start", team_repo.path)
    transcript = tmp_path / "transcript.jsonl"
    transcript.write_text(json.dumps({"type": "assistant", "message": {"content": [
        {"type": "text", "text": f"Using team memory {team_repo.migrate.short}: merging heads first."}]}}) + "\n")
    run = feed("claude", "stop", "stop", team_repo.path, transcript=str(transcript))
    assert_answer(run, NO_OPINION)
    assert [e["lesson"]["id"] for e in recorded("lesson.cited")] == [team_repo.migrate.id]


# ----------------------------------------------------------------------------------- hostile or broken


@pytest.mark.parametrize("stdin", [
    b"", b"   \n", b"not json", b"{", b"[1, 2]", b'"a string"', b"null", b"\xff\xfe\x00\x80garbage",
    b'{"session_id": {"a": 1}, "cwd": 7, "tool_name": ["x"], "tool_input": [1], "tool_response": 3}',
    b'{"session_id": "s", "cwd": "/nonexistent/dir/for/sure", "tool_name": "Edit",'
    b' "tool_input": {"file_path": "/nonexistent/dir/for/sure/a.py"}}',
], ids=["empty", "blank", "text", "truncated", "list", "string", "null", "binary", "wrong-types", "missing-cwd"])
def test_garbage_stdin_is_answered_with_no_opinion(stdin: bytes) -> None:
    assert_answer(run_hook("claude", "post-tool", stdin=stdin), NO_OPINION)


@pytest.mark.parametrize(("harness", "event"), [("codex", "stop"), ("cursor", "post-tool"),
                                                ("gemini", "session-start")])
def test_garbage_stdin_is_answered_with_no_opinion_by_every_harness(harness: str, event: str) -> None:
    assert_answer(run_hook(harness, event, stdin=b"{not json"), NO_OPINION)


@pytest.mark.parametrize("argv", [(), ("vim", "post-tool"), ("claude", "pre-tool"), ("claude",),
                                  ("CLAUDE", "post-tool"), ("claude", "post-tool", "extra")])
def test_unknown_harness_or_event_has_no_opinion(team_repo: TeamRepo, argv: tuple[str, ...]) -> None:
    stdin = payload_text("claude", "post-tool-edit", team_repo.path).encode()
    run = run_hook(*argv, stdin=stdin)
    if argv == ("claude", "post-tool", "extra"):  # extra arguments are ignored: a real answer
        assert_answer(run, claude_shape("PostToolUse", team_repo.settings.frame()))
    else:
        assert_answer(run, NO_OPINION)


def test_an_unwritable_home_still_answers_no_opinion(team_repo: TeamRepo, tmp_path: Path) -> None:
    home = tmp_path / "home-is-a-file"
    home.write_text("not a directory")
    stdin = payload_text("claude", "post-tool-edit", team_repo.path).encode()
    assert_answer(run_hook("claude", "post-tool", stdin=stdin, home=home), NO_OPINION)


@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_stop_reads_citations_from_last_assistant_message(team_repo: TeamRepo, tmp_path: Path,
                                                          harness: str) -> None:
    # The transcript may not hold the current turn yet when Stop fires: its last message comes in the payload.
    start = payload(harness, "session-start", team_repo.path)
    run_hook(harness, "session-start", stdin=json.dumps(start).encode())
    stop = payload(harness, "stop", team_repo.path, transcript=str(tmp_path / "empty.jsonl")) | {
        "session_id": start["session_id"],
        "last_assistant_message": f"Using team memory {team_repo.migrate.short}: merged heads first."}
    (tmp_path / "empty.jsonl").write_text("")
    run = run_hook(harness, "stop", stdin=json.dumps(stop).encode())
    assert_answer(run, NO_OPINION)
    assert [e["lesson"]["id"] for e in recorded("lesson.cited")] == [team_repo.migrate.id]
