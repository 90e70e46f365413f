"""The memory tools as library calls on the shared team (alice's clone and home)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitive.errors import GitiveError, InvalidRecord
from gitive.mcp import memory
from tests.mcp.conftest import PROTO, SESSION_FILE, Team, as_machine


def test_search_returns_nothing_with_a_hint_when_nothing_matches(team: Team) -> None:
    with as_machine(team.alice):
        found = memory.search_memory(team.alice.clone, "zebra xylophone")
    assert found["results"] == [] and found["next_offset"] is None
    assert "include_proposed" in found["note"] and memory.search_text(found) == found["note"]


def test_search_text_shows_frames_and_the_next_page(team: Team) -> None:
    with as_machine(team.alice):
        found = memory.search_memory(team.alice.clone, "widget sizes pixels", include_proposed=True, limit=3)
    text = memory.search_text(found)
    assert text.count("<team-memory ") == 3 and "offset=3" in text


def test_a_retracted_lesson_has_no_text_and_is_never_found(team: Team) -> None:
    with as_machine(team.alice):
        shown = memory.get_lesson(team.alice.clone, team.retracted_lesson)
        found = memory.search_memory(team.alice.clone, "proto cache shared branches", include_proposed=True)
    assert (shown["state"], shown["text"], shown["frame"]) == ("retracted", "", None)
    assert shown["retraction"] == {"reason": "wrong: the cache was never shared"}
    assert team.retracted_lesson not in {r["id"] for r in found["results"]}


def test_get_lesson_refuses_a_short_or_unknown_id(team: Team) -> None:
    with as_machine(team.alice), pytest.raises(GitiveError, match="too short"):
        memory.get_lesson(team.alice.clone, "abc")


def test_the_card_without_task_or_files_asks_for_them(team: Team) -> None:
    with as_machine(team.alice):
        found = memory.memory_context(team.alice.clone)
    assert found["lessons"] == [] and "Give a task" in found["card"]


def test_the_card_with_no_match_says_so(team: Team) -> None:
    with as_machine(team.alice):
        found = memory.memory_context(team.alice.clone, "paint the zebra")
    assert found["lessons"] == [] and "No verified team lesson" in found["card"]


def test_the_card_frames_the_top_lessons_and_lists_the_rest(team: Team,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory, "CARD_FRAMED", 1)
    with as_machine(team.alice):
        found = memory.memory_context(team.alice.clone, "session cookie", [SESSION_FILE, PROTO])
    assert [x["id"] for x in found["lessons"]] == [team.session_lesson]
    assert [x["id"] for x in found["more"]] == [team.proto_lesson]
    assert found["card"].count("<team-memory ") == 1
    assert f"- {team.proto_lesson[:12]} Convention (by bob, reviewed by alice)" in found["card"]


def test_propose_needs_evidence_and_writes_nothing_without(team: Team) -> None:
    with as_machine(team.alice), pytest.raises(InvalidRecord, match="cite or omit"):
        memory.propose_lesson(team.alice.clone, kind="Gotcha", text="Nothing to cite.", evidence=[])


def test_proposing_the_same_lesson_twice_says_it_exists(team: Team) -> None:
    args = {"kind": "Routing", "text": "Questions about the gateway quota go to the platform team.",
            "evidence": [f"file:{PROTO}"]}
    with as_machine(team.alice):
        first = memory.propose_lesson(team.alice.clone, **args)
        again = memory.propose_lesson(team.alice.clone, **args)
    assert first["created"] and not again["created"] and first["id"] == again["id"]
    assert "already proposed" in again["message"]


def test_the_index_kept_open_keeps_its_write_ahead_log_between_calls(team: Team) -> None:
    wal = team.alice.clone / ".git" / "gitive" / "index.sqlite-wal"
    with as_machine(team.alice):
        with memory.index_kept_open(team.alice.clone):
            memory.search_memory(team.alice.clone, "session cookie")
            assert wal.exists()
        memory.search_memory(team.alice.clone, "session cookie")
    assert not wal.exists()  # the last connection to close checkpoints and removes it


def test_the_index_kept_open_outside_a_hive_holds_nothing(tmp_path: Path) -> None:
    with memory.index_kept_open(tmp_path):
        pass
