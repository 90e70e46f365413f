"""``list_team`` as a library call on the shared team (alice's clone and home)."""

from __future__ import annotations

from gitive.mcp import roster
from tests.mcp.conftest import Team, as_machine


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


def test_sessions_older_than_live_are_not_listed(team: Team) -> None:
    with as_machine(team.alice):
        now = roster.list_team(team.alice.clone)
        later = roster.list_team(team.alice.clone, now_ms=4_000_000_000_000)
    assert [s["session"] for s in now["sessions"]] == ["claude-s1"] and now["sessions"][0]["in_this_repo"]
    assert later["sessions"] == []
