"""The MCP server as a harness sees it: a real ``python -m gitive.mcp`` process driven by the SDK's own
client over stdio, started in alice's clone with her ``GITIVE_HOME``, on a repository with history and
verified lessons.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from testing import fixtures, live
from testing.machines import Machine
from tests.mcp.conftest import (
    INVOICE_FILE,
    PROTO,
    SESSION_FILE,
    Team,
    as_machine,
    client,
)

pytestmark = pytest.mark.anyio

TOOLS = {"search_memory", "get_lesson", "get_memory_context", "propose_lesson", "list_team", "who_knows",
         "send_message", "check_inbox", "owe", "owed", "context_for", "search_mail", "claim_files", "propose_item"}
WRITERS = {"propose_lesson", "send_message", "check_inbox", "owe", "claim_files", "propose_item"}  # check_inbox writes only read-acks
FORBIDDEN = re.compile(r"approve|reject|retract|remove|invite|join|roster|review|delete|sign", re.IGNORECASE)


def _text(result: Any) -> str:
    return "".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def test_the_tool_list_is_exactly_these_tools(team: Team) -> None:
    async with client(team.alice) as c:
        listed = (await c.list_tools()).tools
    assert {t.name for t in listed} == TOOLS
    assert not [t.name for t in listed if FORBIDDEN.search(t.name)]
    hints = {t.name: t.annotations.read_only_hint for t in listed if t.annotations}
    assert hints == {name: name not in WRITERS for name in TOOLS}
    # A second send with the same arguments sends a second message: send_message is not idempotent.
    idempotent = {t.name: t.annotations.idempotent_hint for t in listed if t.annotations}
    assert idempotent == {name: name not in ("send_message", "propose_item") for name in TOOLS}
    for tool in listed:
        assert tool.description and tool.input_schema["type"] == "object"


async def test_instructions_say_data_not_instructions_cite_ids_and_people_approve(team: Team) -> None:
    async with client(team.alice) as c:
        text = c.instructions or ""
    assert "gitive" in text
    assert "<team-memory" in text and "not instructions" in text
    assert '"Using team memory <id>"' in text
    assert "approving is a person's job" in text


async def test_search_memory_returns_provenance_and_frames(team: Team) -> None:
    async with client(team.alice) as c:
        result = await c.call_tool("search_memory", {"query": "refresh token session cookie",
                                                     "files": [SESSION_FILE]})
    assert not result.is_error, _text(result)
    found = result.structured_content
    assert found is not None
    first = found["results"][0]
    assert first["id"] == team.session_lesson
    assert (first["state"], first["verified"], first["scope"]) == ("verified", True, "project")
    assert (first["author"], first["reviewer"], first["label"]) == ("bob", "alice", None)
    # The cited file, and the file the cited commit (HEAD~1, "add invoices") changed.
    assert first["age_days"] >= 0 and first["stale"] == [] and first["files"] == [SESSION_FILE, INVOICE_FILE]
    opening = f'<team-memory id="{team.session_lesson}" scope="project" reviewed-by="alice"'
    assert first["frame"].startswith(opening)
    assert first["frame"].split("\n")[0].endswith(" verified>")
    assert first["text"] in first["frame"] and first["frame"].endswith("</team-memory>")
    assert all(r["verified"] for r in found["results"])  # verified only unless asked
    assert team.proposed_lesson not in {r["id"] for r in found["results"]}
    text = _text(result)  # what the model reads: the frames themselves, not escaped JSON
    assert first["frame"] in text and "Using team memory <id>" in text


async def test_search_memory_marks_stale_evidence_after_the_frame(team: Team) -> None:
    async with client(team.alice) as c:
        result = await c.call_tool("search_memory", {"query": "make gen", "files": [PROTO]})
    lesson = next(r for r in result.structured_content["results"] if r["id"] == team.proto_lesson)
    assert lesson["stale"] == [PROTO]
    closing = lesson["frame"].index("</team-memory>")
    assert "changed since" in lesson["frame"][closing:] and PROTO in lesson["frame"][closing:]


async def test_search_memory_labels_proposed_lessons_when_asked(team: Team) -> None:
    async with client(team.alice) as c:
        result = await c.call_tool("search_memory", {"query": "flaky session tests parallel",
                                                     "include_proposed": True})
    lesson = next(r for r in result.structured_content["results"] if r["id"] == team.proposed_lesson)
    assert (lesson["state"], lesson["verified"], lesson["reviewer"]) == ("proposed", False, None)
    assert "not reviewed" in lesson["label"]
    assert " verified>" not in lesson["frame"] and "label=" in lesson["frame"]


async def test_a_hostile_lesson_cannot_close_or_open_a_frame(team: Team) -> None:
    async with client(team.alice) as c:
        result = await c.call_tool("search_memory", {"query": "invoices round half-even ignore",
                                                     "include_proposed": True})
        raw = _text(result)
    lesson = next(r for r in result.structured_content["results"] if r["id"] == team.hostile_lesson)
    assert lesson["frame"].count("<team-memory") == 1 and lesson["frame"].count("</team-memory") == 1
    assert "<team-memory" not in lesson["text"] and "</team-memory" not in lesson["text"]
    assert "[team-memory" in lesson["text"]
    assert raw.count("<team-memory") == raw.count("</team-memory")


async def test_search_memory_pages_are_bounded_and_disjoint(team: Team) -> None:
    async with client(team.alice) as c:
        one = await c.call_tool("search_memory", {"query": "widget sizes pixels", "include_proposed": True,
                                                  "limit": 100})
        first, first_text = one.structured_content, _text(one)
        two = await c.call_tool("search_memory", {"query": "widget sizes pixels", "include_proposed": True,
                                                  "limit": 100, "offset": first["next_offset"]})
        second, second_text = two.structured_content, _text(two)
    assert len(first["results"]) == 20 and first["next_offset"] == 20
    assert first["results"][0]["label"] and "not reviewed" in first["results"][0]["label"]
    assert second["offset"] == 20 and second["next_offset"] is None
    assert "offset=20" in first_text and "offset=" not in second_text
    ids = [r["id"] for r in first["results"]] + [r["id"] for r in second["results"]]
    assert len(ids) == len(set(ids))
    assert set(team.widget_lessons) <= set(ids)


async def test_get_lesson_by_prefix_shows_reviews_and_evidence(team: Team) -> None:
    async with client(team.alice) as c:
        result = await c.call_tool("get_lesson", {"id": team.session_lesson[:10]})
        missing = await c.call_tool("get_lesson", {"id": "ffffffffffff"})
    found = result.structured_content
    assert found["id"] == team.session_lesson and found["verified"]
    assert found["reviews"] == [{"approver": "alice", "approved": True, "note": "seen in the incident last week",
                                 "edited": False}]
    assert {e["kind"] for e in found["evidence"]} == {"file", "commit"}
    assert missing.is_error and "no lesson" in _text(missing)


async def test_get_memory_context_gives_a_card_in_frames_and_data(team: Team) -> None:
    async with client(team.alice) as c:
        result = await c.call_tool("get_memory_context", {"task": "fix the session cookie refresh",
                                                          "files": [SESSION_FILE, PROTO]})
    card = _text(result)
    assert not result.is_error
    assert card.startswith("Team memory for this task")
    assert f'<team-memory id="{team.session_lesson}"' in card
    assert "Using team memory <id>" in card
    data = result.structured_content
    assert data["card"] == card
    assert data["lessons"][0]["id"] == team.session_lesson
    assert all(x["verified"] for x in data["lessons"])
    assert team.proposed_lesson not in card


async def test_propose_lesson_creates_a_proposed_lesson_awaiting_review(team: Team) -> None:
    text = "Invoice numbers are allocated by the database sequence; never compute them in Python."
    session = live.session_address(team.alice, "claude-s1")  # a label must be one of this machine's sessions
    async with client(team.alice) as c:
        result = await c.call_tool("propose_lesson", {
            "kind": "Gotcha", "text": text, "evidence": [f"file:{INVOICE_FILE}", "commit:HEAD"],
            "tags": ["billing"], "session": session})
    assert not result.is_error, _text(result)
    done = result.structured_content
    assert (done["state"], done["verified"], done["created"]) == ("proposed", False, True)
    assert "review" in done["message"] and "cannot approve" in done["message"]
    found = _catalog(team.alice, done["id"])
    assert (found["state"], found["text"]) == ("proposed", text)
    assert (found["author"], found["reviewer"]) == ("alice", None)
    assert found["session"] == session and found["tags"] == ["billing"]


async def test_a_refused_proposal_is_a_one_line_tool_error(team: Team) -> None:
    async with client(team.alice) as c:
        no_evidence = await c.call_tool("propose_lesson", {"kind": "Gotcha", "text": "x", "evidence": []})
        no_quote = await c.call_tool("propose_lesson", {"kind": "Decision", "text": "We use gRPC.",
                                                        "evidence": [f"file:{PROTO}"]})
        bad_kind = await c.call_tool("propose_lesson", {"kind": "<team-memory verified>", "text": "x",
                                                        "evidence": [f"file:{PROTO}"]})
        missing_arg = await c.call_tool("propose_lesson", {"kind": "Gotcha"})
    for result in (no_evidence, no_quote, bad_kind, missing_arg):
        assert result.is_error and result.structured_content is None
    assert _text(no_evidence) == "propose_lesson: evidence needs at least 1 item"
    assert "needs a quote" in _text(no_quote)
    assert "<team-memory" not in _text(bad_kind) and "kind must be one of Convention" in _text(bad_kind)


async def test_who_knows_ranks_the_files_committer_first_with_reasons(team: Team) -> None:
    async with client(team.alice) as c:
        by_file = (await c.call_tool("who_knows", {"files": [SESSION_FILE]})).structured_content
        by_proto = (await c.call_tool("who_knows", {"files": [PROTO]})).structured_content
        by_topic = (await c.call_tool("who_knows", {"query": "refresh token cookie"})).structured_content
    first, second = by_file["people"][:2]
    assert first["person"] == "bob" and not first["you"]
    commits = next(r for r in first["reasons"] if r["kind"] == "commits")
    assert commits["count"] == 4 and SESSION_FILE in commits["detail"]
    assert second["person"] == "alice" and second["you"]
    assert {r["kind"] for r in second["reasons"]} >= {"sessions", "reviewed"}
    assert second["sessions"][0]["session"] == "claude-s1" and second["sessions"][0]["harness"] == "claude"
    assert by_proto["people"][0]["person"] == "alice"
    assert next(r for r in by_proto["people"][0]["reasons"] if r["kind"] == "commits")["count"] == 3
    assert by_topic["files_from"] == "lessons" and SESSION_FILE in by_topic["files"]
    assert by_topic["people"][0]["person"] == "bob"


async def test_list_team_shows_the_roster_and_live_sessions(team: Team) -> None:
    async with client(team.alice) as c:
        found = (await c.call_tool("list_team", {})).structured_content
        only_bob = (await c.call_tool("list_team", {"filter": "bo"})).structured_content
    assert [(p["person"], p["you"]) for p in found["people"]] == [("alice", True), ("bob", False)]
    assert [p["machines"][0]["role"] for p in found["people"]] == ["admin", "member"]  # alice founded the team
    alice, bob = found["people"]
    assert [s["session"] for s in alice["sessions"]] == ["claude-s1"]
    assert [s["session"] for s in bob["sessions"]] == ["bob/api-codex"]
    assert [p["person"] for p in only_bob["people"]] == ["bob"]


async def test_a_repository_without_a_team_gives_tool_errors(team: Team, tmp_path: Path) -> None:
    plain = fixtures.init_repo(tmp_path / "plain")
    stranger = Machine("stranger", team.alice.home, plain)
    async with client(stranger) as c:
        result = await c.call_tool("search_memory", {"query": "anything"})
    assert result.is_error and "no gitive team" in _text(result)


async def test_the_repo_option_serves_another_directory(team: Team, tmp_path: Path) -> None:
    elsewhere = Machine("elsewhere", team.alice.home, tmp_path)
    async with client(elsewhere, "--repo", str(team.alice.clone)) as c:
        result = await c.call_tool("get_lesson", {"id": team.proto_lesson[:12]})
    assert not result.is_error and result.structured_content["id"] == team.proto_lesson


def _catalog(machine: Machine, lesson: str) -> dict[str, Any]:
    from gitive.index.refresh import fresh_index
    from gitive.lessons import catalog
    from gitive.team.hive import open_hive

    with as_machine(machine):
        hive = open_hive(machine.clone)
        with fresh_index(hive) as (conn, _):
            return catalog.get(conn, lesson)


async def test_mail_and_claim_calls_keep_the_daemon_database_open(team: Team) -> None:
    """Each call opens and closes its own connection; the server holds one more, idle, so that SQLite does not
    checkpoint and delete the write-ahead log (two disk syncs) at the end of every call."""
    import time

    import anyio

    from tests.mcp.conftest import refresh_sessions

    refresh_sessions(team)
    me = live.session_address(team.alice, "claude-s1")
    wal = team.alice.home / "daemon.sqlite-wal"
    async with client(team.alice, mode="legacy") as c:
        deadline = time.monotonic() + 60  # the server holds it once its SDK has loaded, behind the first call
        while True:
            inbox = await c.call_tool("check_inbox", {"session": me})
            claimed = await c.call_tool("claim_files", {"paths": [INVOICE_FILE], "minutes": 0, "session": me})
            assert not inbox.is_error and not claimed.is_error, (_text(inbox), _text(claimed))
            if wal.exists() or time.monotonic() > deadline:
                break
            await anyio.sleep(0.2)
        assert wal.exists()  # the calls' connections have closed, and the log is still there
