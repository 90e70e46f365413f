"""Every view is also JSON at the same path with ``Accept: application/json``, from the same library reads the
CLI uses (search ranks exactly as `gitive lessons search`); and a new team sees empty states that say what next."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from testing import fixtures
from testing.machines import Fleet
from testing.ui import Server, Team


def test_each_view_as_json(shared: tuple[Team, Server]) -> None:
    team, server = shared
    t = server.json("/team")
    assert t["view"] == "team"
    assert sorted(p["person"] for p in t["people"]) == ["alice", "bob", "carol"]
    assert {s["person"] for s in t["sessions"] if s["live"]} == {"alice", "bob", "carol"}
    assert [(o["file"], sorted(o["sessions"])) for o in t["overlaps"]] == [
        ("src/app.py", sorted(s["address"] for s in t["sessions"] if s["person"] in ("alice", "bob")))]
    assert all(m["last_seen"] for p in t["people"] for m in p["machines"])

    m = server.json("/memory")
    assert m["counts"]["verified"] == 1 and m["counts"]["proposed"] == 2
    queue = {q["id"]: q for q in m["review_queue"]}
    assert set(queue) == {team.lessons["proposed"], team.lessons["carol"]}
    assert queue[team.lessons["proposed"]]["command"] == f"gitive review approve {team.lessons['proposed'][:12]}"
    [verified] = m["verified"]
    assert verified["id"] == team.lessons["verified"] and verified["citations"] == 1
    assert verified["stale"] == []
    assert sum(d["count"] for d in m["cited_per_day"]) == 1

    h = server.json("/health")
    assert h["problems"] == [] and h["quarantined"] == [] and h["rollbacks"] == []
    assert h["sync"]["last"]["ok"] is True and h["index"]["entries"] > 0

    for view in ("obligations", "gate"):
        found = server.json(f"/{view}")
        assert found["enabled"] is False
        assert found["reason"].startswith("not enabled on this team")
        assert found["enable"]

    lesson = server.json(f"/lessons/{team.lessons['verified'][:10]}")["lesson"]
    assert lesson["id"] == team.lessons["verified"] and lesson["reviews"][0]["approver"] == "alice"
    missing = server.request("/lessons/" + "0" * 64, headers={"Accept": "application/json"})
    assert missing.status == 404 and "no lesson" in missing.json()["error"]


def test_search_ranks_exactly_as_the_cli(shared: tuple[Team, Server]) -> None:
    team, server = shared
    a = team.machines[0]
    for query, files, proposed in [("make gen proto client", [], "1"), ("flaky payments midnight", [], "1"),
                                   ("flaky payments midnight", [], ""), ("", ["api.proto"], "1"),
                                   ("database staging", ["src/app.py"], "1")]:
        found = server.json("/memory?" + urlencode({"q": query, "files": " ".join(files), "proposed": proposed}))
        cli = a.json("lessons", "search", query, *[x for f in files for x in ("--files", f)],
                      *(["--proposed"] if proposed else []), "--limit", "20")
        assert [r["id"] for r in found["search"]["results"]] == [r["id"] for r in cli], query
        assert [r["score"] for r in found["search"]["results"]] == [r["score"] for r in cli], query


def test_a_new_team_sees_what_to_do_next(tmp_path: Path, serve: Any) -> None:
    fleet = Fleet(tmp_path / "fleet")
    alone = fleet.found(fleet.machine("a", fixtures.init_bare(tmp_path / "remote.git")), "alice")
    server = serve(alone)
    team = server.json("/team")
    assert [p["person"] for p in team["people"]] == ["alice"] and team["sessions"] == []
    page = server.request("/team").text
    assert "Only you so far" in page and "gitive invite" in page
    assert "No live sessions" in page and "gitive daemon start" in page
    memory = server.request("/memory").text
    assert "Nothing waits for review" in memory and "gitive lessons propose" in memory
    assert "No verified lessons yet" in memory
    assert server.json("/memory")["counts"] == dict.fromkeys(
        ("proposed", "held", "verified", "rejected", "superseded", "retracted"), 0)
    health = server.request("/health").text
    assert "No problems found" in health
