"""Scope decides the store: personal lessons travel only sealed, project lessons can live in the team
store when the project repository is more public than the team (``hive.projectStore = team``)."""

from __future__ import annotations

from pathlib import Path

from testing import fixtures
from testing.lessons import propose, reachable_blobs
from testing.machines import Fleet, Machine
from tests.lessons.conftest import share_file


def _blobs_with(repo: Path, text: str) -> list[str]:
    return [oid for oid, data in reachable_blobs(repo).items() if text.encode() in data]


def _logs(repo: Path) -> set[str]:
    """``<machine>/<log>`` of every log ref the repository holds."""
    return {name.split("/", 3)[3] for name in fixtures.ref_tips(repo, "refs/hive/logs/")}


def test_a_personal_lesson_reaches_the_remote_only_sealed(founder: Machine, bare_remote: Path) -> None:
    a = founder
    secret = "I always forget to run the linter before lunch"
    personal = propose(a, secret, "--scope", "personal", "--tag", "lunchtime-linter")
    shared = propose(a, "The project lesson next to it is shared")
    a.ok("sync")

    assert {f"{a.id}/{a.project_log}", f"{a.id}/personal"} <= _logs(bare_remote)  # it travels, sealed
    for text in (secret, "lunchtime-linter", personal):
        assert _blobs_with(bare_remote, text) == []
        assert _blobs_with(a.clone, text) == []
    assert _blobs_with(bare_remote, "The project lesson next to it is shared")
    assert not (a.home / "personal.git").exists()  # no local-only store any more
    shown = a.json("lessons", "show", personal)
    assert (shown["scope"], shown["text"], shown["tags"]) == ("personal", secret, ["lunchtime-linter"])
    assert {item["id"] for item in a.json("lessons", "list")} == {personal, shared}


def test_a_personal_lesson_is_invisible_to_teammates(trio: list[Machine]) -> None:
    a, b, _ = trio
    personal = propose(a, "My own reminder about api.proto", "--scope", "personal")
    a.ok("sync")
    b.ok("sync")
    assert personal not in {item["id"] for item in b.json("lessons", "list")}
    assert b.run("lessons", "show", personal).code == 1


def test_a_project_lesson_stays_out_of_the_project_remote_with_project_store_team(
        fleet: Fleet, bare_remote: Path, make_bare) -> None:
    team_remote = make_bare("team.git")
    a = fleet.machine("a", bare_remote)
    a.decided("init", "--person", "alice", "--machine", "a", "--team-remote", str(team_remote))
    a.git("config", "hive.projectStore", "team")
    share_file([a])
    a.ok("sync")
    text = "The billing endpoint retries three times before paging"
    lesson = propose(a, text)
    team_lesson = propose(a, "Team-wide: we release on Tuesdays", "--scope", "team")
    a.ok("sync")

    assert _logs(bare_remote) == set()  # the project's own remote holds no gitive log at all
    assert _blobs_with(bare_remote, text) == []
    assert not [n for n in fixtures.ref_tips(bare_remote) if n.startswith("refs/hive")]
    assert {f"{a.id}/{a.project_log}", f"{a.id}/team", f"{a.id}/roster"} <= _logs(team_remote)
    assert _blobs_with(team_remote, text)
    assert _blobs_with(team_remote, "Team-wide: we release on Tuesdays")
    shown = a.json("lessons", "show", lesson)
    assert (shown["scope"], shown["text"]) == ("project", text)
    assert a.json("lessons", "show", team_lesson)["scope"] == "team"
