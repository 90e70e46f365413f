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
    a = team.machines[0]
    t = server.json("/team")
    assert t["view"] == "team"
    assert sorted(p["person"] for p in t["people"]) == ["alice", "anchor", "bob", "carol"]
    assert [p["roles"] for p in t["people"] if p["person"] == "anchor"] == [["anchor"]]
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

    assert m["page"] == {"number": 1, "of": 1, "size": 50}
    assert server.json("/memory?page=9")["page"]["number"] == 1  # past the last page: the last page

    o = server.json("/obligations")
    assert o["enabled"] is True and len(o["anchors"]) == 1 and o["current"] is True
    sections = {i["id"]: (key, i) for key, items in o["groups"].items() for i in items}
    assert {key: sections[ident][0] for key, ident in team.obligations.items()} == {
        "fired": "fired", "late": "late", "lapsing": "lapsing", "open": "open", "unknown": "open"}
    fired, late = sections[team.obligations["fired"]][1], sections[team.obligations["late"]][1]
    assert (fired["truth"], fired["status"], fired["owner"], fired["to"]) == ("true", "fired", "bob", "alice")
    assert fired["firings"]["condition"]["late"] is True  # the anchor ran after the merge: a replay
    assert (late["status"], late["truth"], list(late["firings"])) == ("past-due", "false", ["deadline"])
    assert sections[team.obligations["lapsing"]][1]["expires"] - o["now"] < 86_400_000
    unknown = sections[team.obligations["unknown"]][1]
    assert unknown["truth"] == "unknown" and "session's own event log" in unknown["evaluation"]["reason"]
    assert sections[team.obligations["open"]][1]["files"] == ["docs/runbook.md"]
    assert o["counts"] == {"late": 1, "fired": 1, "lapsing": 1, "open": 2, "closed": 0, "unknown": 1}
    cli = {i["id"]: i for i in a.json("owed", "--all")["obligations"]}
    assert {i: (s[1]["status"], s[1]["evaluation"]) for i, s in sections.items()} == {
        i: (c["status"], c["evaluation"]) for i, c in cli.items()}  # the same reading as `gitive owed`

    g = server.json("/gate")
    assert g["enabled"] is True and g["anchors"] == o["anchors"]
    people = {p["person"]: p for p in g["people"]}
    assert set(people) == {"alice", "bob", "carol"}
    assert (people["alice"]["live"], people["alice"]["budget"]) == (True, 3)
    assert not people["bob"]["live"] and not people["carol"]["live"]
    assert {(d["person"], d["branch"], d["shadow"]) for d in g["decisions"]} == {
        ("alice", "attention", False), ("bob", "attention", True), ("carol", "digest", True)}
    # The ledger stays metadata only; the page names each item by its own record's title, as `gitive why` does
    assert all("title" not in e["record"] for e in a.json("log", "--log", "ledger", "--kind", "ledger"))
    for d in g["decisions"]:
        record = a.json("why", d["item"][:12])["record"]
        assert d["title"] == record.get("title")  # the same title `why` opens here, or none where it is sealed
        assert d["sealed"] == (d["title"] is None and bool(record.get("sealed")))
    # alice's machine opens the titles of alice's own items; another person's are sealed to their machines
    assert all(d["title"] for d in g["decisions"] if d["person"] == "alice")
    assert all(d["sealed"] for d in g["decisions"] if d["person"] != "alice")
    assert people["alice"]["per_day"][-1] == {"day": people["alice"]["per_day"][-1]["day"], "interruptions": 1,
                                              "attention": 1, "shadow": 0}
    assert people["bob"]["per_day"][-1]["shadow"] == 1 and len(people["bob"]["per_day"]) == 14
    assert people["carol"]["rates"]["held_silenced_digested"] == 1
    b = team.machines[1]
    report = b.json("gate", "report", "--days", "14")  # bob's own, on his machine (he marked nothing)
    assert report.pop("live") is False
    assert {k: v for k, v in people["bob"]["rates"].items() if k != "since"} == {
        k: v for k, v in report.items() if k != "since"}

    lesson = server.json(f"/lessons/{team.lessons['verified'][:10]}")["lesson"]
    assert lesson["id"] == team.lessons["verified"] and lesson["reviews"][0]["approver"] == "alice"
    assert lesson["files"] and {"symptoms", "files"} <= set(lesson)  # what recall matches on, as the CLI shows it
    page = server.request(f"/lessons/{team.lessons['verified'][:10]}").text
    assert "shown for files" in page and all(f in page for f in lesson["files"])
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
    for view in ("obligations", "gate"):
        found = server.json(f"/{view}")
        assert found["enabled"] is False and found["reason"].startswith("not enabled on this team")
        assert "gitive invite --anchor" in found["enable"]
        page = server.request(f"/{view}").text
        assert "not enabled on this team" in page and "gitive invite --anchor" in page
    assert any(c.startswith("gitive owe ") for c in server.json("/obligations")["enable"])
