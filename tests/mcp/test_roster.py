"""``list_team`` as a library call on the shared team (alice's clone and home)."""

from __future__ import annotations

from gitive.mcp import roster
from tests.mcp.conftest import SESSION_FILE, Team, as_machine


def test_the_roster_by_person_with_machines_and_you(team: Team) -> None:
    with as_machine(team.alice):
        found = roster.list_team(team.alice.clone)
    assert found["total"] == 2 and found["next_offset"] is None
    alice, bob = found["people"]
    assert (alice["person"], alice["you"], alice["active"]) == ("alice", True, True)
    assert bob["machines"][0]["name"] == "b" and len(bob["machines"][0]["machine"]) == 12
    assert "presence" in found["note"]


def test_pages_and_filter(team: Team) -> None:
    with as_machine(team.alice):
        first = roster.list_team(team.alice.clone, limit=1)
        by_machine = roster.list_team(team.alice.clone, "B")
    assert [p["person"] for p in first["people"]] == ["alice"] and first["next_offset"] == 1
    assert [p["person"] for p in by_machine["people"]] == ["bob"]


def test_your_sessions_come_from_this_machines_event_log(team: Team) -> None:
    with as_machine(team.alice):
        alice = roster.list_team(team.alice.clone, "alice")["people"][0]
    [session] = alice["sessions"]
    assert (session["session"], session["harness"], session["machine"]) == ("claude-s1", "claude", "this machine")
    assert session["in_this_repo"] and session["files"] == [SESSION_FILE]


def test_teammates_sessions_come_from_their_verified_presence(team: Team) -> None:
    with as_machine(team.alice):
        bob = roster.list_team(team.alice.clone, "bob")["people"][0]
    [session] = bob["sessions"]
    assert (session["session"], session["harness"], session["machine"]) == ("bob/api-codex", "codex", "b")
    assert (session["repo"], session["branch"], session["turn"]) == (team.bob.clone.name, "main", "busy")
    assert session["files"] == [SESSION_FILE]
    assert "<team-memory" not in session["doing"] and "[team-memory" in session["doing"]


def test_sessions_older_than_live_are_not_listed(team: Team) -> None:
    with as_machine(team.alice):
        later = roster.list_team(team.alice.clone, now_ms=4_000_000_000_000)
    assert [p["sessions"] for p in later["people"]] == [[], []]
