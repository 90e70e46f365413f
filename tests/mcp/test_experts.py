"""``who_knows`` as a library call on the shared team (alice's clone and home)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gitive.mcp import experts
from tests.mcp.conftest import CAROL, INVOICE_FILE, PROTO, SESSION_FILE, Team, as_machine


def test_the_files_committer_ranks_first_with_counted_reasons(team: Team) -> None:
    with as_machine(team.alice):
        found = experts.who_knows(team.alice.clone, files=[SESSION_FILE])
    assert [p["person"] for p in found["people"]] == ["bob", "alice"]
    bob = found["people"][0]
    assert [(r["kind"], r["count"]) for r in bob["reasons"]] == [("commits", 4), ("sessions", 1), ("wrote", 1)]
    assert bob["reasons"][2]["lessons"] == [team.session_lesson[:12]]
    assert bob["score"] == 4 * experts.W_COMMIT + experts.W_SESSION + experts.W_WROTE
    assert bob["sessions"][0]["session"] == "bob/api-codex"  # from bob's published presence
    assert found["files_from"] == "given" and found["since_days"] == experts.HISTORY_DAYS


def test_this_machines_sessions_count_for_you(team: Team) -> None:
    with as_machine(team.alice):
        found = experts.who_knows(team.alice.clone, files=["src/auth"])
    alice = next(p for p in found["people"] if p["person"] == "alice")
    assert alice["you"]
    sessions = next(r for r in alice["reasons"] if r["kind"] == "sessions")
    assert sessions["count"] == 1 and "src/auth" in sessions["detail"]
    assert alice["sessions"][0]["files"] == [SESSION_FILE]
    assert alice["sessions"][0]["machine"] == "this machine"


def test_authors_off_the_roster_are_listed_apart(team: Team) -> None:
    with as_machine(team.alice):
        found = experts.who_knows(team.alice.clone, files=[INVOICE_FILE])
    assert found["others"] == [{"email": CAROL, "commits": 1}]
    assert "carol" not in {p["person"] for p in found["people"]}


def test_a_topic_alone_looks_at_the_files_matching_lessons_cite(team: Team) -> None:
    with as_machine(team.alice):
        found = experts.who_knows(team.alice.clone, "make gen generated client")
    assert found["files_from"] == "lessons" and PROTO in found["files"]
    first = found["people"][0]
    assert first["person"] == "alice"
    assert {r["kind"] for r in first["reasons"]} >= {"commits", "reviewed"}
    assert "files cited by matching lessons" in first["reasons"][0]["detail"]


def test_people_are_paged(team: Team) -> None:
    with as_machine(team.alice):
        first = experts.who_knows(team.alice.clone, files=[SESSION_FILE], limit=1)
        second = experts.who_knows(team.alice.clone, files=[SESSION_FILE], limit=1, offset=first["next_offset"])
    assert [p["person"] for p in first["people"]] == ["bob"] and first["next_offset"] == 1
    assert [p["person"] for p in second["people"]] == ["alice"] and second["next_offset"] is None


def test_nothing_asked_gives_nobody_and_says_what_to_give(team: Team) -> None:
    with as_machine(team.alice):
        found = experts.who_knows(team.alice.clone)
    assert found["people"] == [] and found["files_from"] == "none"
    assert "Give a file" in found["note"]


def test_an_unknown_file_without_history_gives_nobody(team: Team) -> None:
    with as_machine(team.alice):
        found = experts.who_knows(team.alice.clone, files=["no/such/file.rs"])
    assert found["people"] == [] and "Nobody" in found["note"]


def _evidence(files: list[str], sessions: list[dict[str, Any]], project: str = "p1") -> experts._Evidence:
    snap = {"person": "bob", "machine_name": "b", "sessions": sessions}
    return experts._Evidence([], files, "given", [], [], None, Path("/r"), project, [snap])


def _live(**fields: Any) -> dict[str, Any]:
    return {"name": "s", "address": "bob/s", "harness": "codex", "project": "p1", "files": [], "modified": [],
            "last_seen": NOW - 60_000, **fields}


NOW = 1_800_000_000_000


def test_peer_sessions_match_by_the_repository_relative_end_of_their_paths() -> None:
    found = _evidence(["src/auth/session.py"], [
        _live(name="abs", files=["/home/bob/api/src/auth/session.py"]),
        _live(name="rel", modified=["src/auth/session.py"]),
        _live(name="other-file", files=["/home/bob/api/src/auth/session.pyc"]),
        _live(name="other-project", project="p2", files=["src/auth/session.py"]),
        _live(name="quiet", files=["src/auth/session.py"], last_seen=NOW - 3_600_000),
    ])
    assert [i["name"] for _, i in experts._peer_sessions_touching(found, NOW)] == ["abs", "rel"]


def test_a_directory_matches_the_files_below_it() -> None:
    found = _evidence(["src/auth/"], [_live(files=["/home/bob/api/src/auth/tokens/jwt.py"])])
    assert len(experts._peer_sessions_touching(found, NOW)) == 1
