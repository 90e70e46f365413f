"""Deadlines and expiry with a controllable clock (``GITIVE_NOW_MS`` in this process; the clock file for a real
anchor process is in test_process.py)."""

from __future__ import annotations

import time

import pytest

from testing.anchor import AnchoredTeam, Ticker, owe, owed

DAY = 86_400_000
NEVER = 'e.event.action == "vcs.tag_created" && e.vcs.tag == "never"'


def _deadline(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ms / 1000))


def test_a_deadline_passing_fires_once_and_lapsing_warns_then_lapses(team: AnchoredTeam,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    start = int(time.time() * 1000)
    record = owe(team.bob, NEVER, "renew the certificate", "--deadline", _deadline(start + 2 * DAY), "--expires", "4d")
    tick = Ticker(team.anchor)
    assert tick().fired == []

    monkeypatch.setenv("GITIVE_NOW_MS", str(record["deadline"] + 60_000))
    due = tick()
    assert [(f["kind"], f["due"], f["late"]) for f in due.fired] == [("obligation.due", record["deadline"], False)]
    assert due.events.get("clock", 0) >= 3  # two clock.day events and obligation.due
    assert tick().fired == []

    monkeypatch.setenv("GITIVE_NOW_MS", str(record["expires"] - DAY // 2))
    lapsing = tick()
    assert [f["kind"] for f in lapsing.fired] == ["obligation.lapsing"]

    monkeypatch.setenv("GITIVE_NOW_MS", str(record["expires"] + 60_000))
    lapsed = tick()
    assert lapsed.fired == [] and lapsed.events.get("clock")
    assert [q["kind"] for q in tick.queue()] == ["obligation.due", "obligation.lapsing"]
    shown = {o["id"]: o for o in owed(team.anchor, "--all")}
    assert shown[record["id"]]["status"] == "lapsed"
    assert record["id"] not in {o["id"] for o in owed(team.anchor)}


def test_a_renewed_obligation_does_not_lapse(team: AnchoredTeam, monkeypatch: pytest.MonkeyPatch) -> None:
    record = owe(team.bob, NEVER, "keep an eye on the flag", "--expires", "2d")
    team.bob.ok("obligation", "renew", record["id"][:10], "--for", "30d")
    team.bob.ok("sync")
    tick = Ticker(team.anchor)
    monkeypatch.setenv("GITIVE_NOW_MS", str(record["expires"] + DAY))
    report = tick()
    assert report.fired == []
    [shown] = owed(team.anchor)
    assert shown["status"] == "open" and shown["expires"] > record["expires"] + DAY


def test_a_missed_deadline_fires_late_after_downtime(team: AnchoredTeam, monkeypatch: pytest.MonkeyPatch) -> None:
    start = int(time.time() * 1000)
    record = owe(team.bob, NEVER, "send the report", "--deadline", _deadline(start + DAY), "--expires", "5d")
    Ticker(team.anchor)()
    monkeypatch.setenv("GITIVE_NOW_MS", str(record["deadline"] + 2 * DAY))  # the anchor was down two days
    report = Ticker(team.anchor)()
    [item] = [f for f in report.fired if f["kind"] == "obligation.due"]
    assert item["late"] and item["due"] == record["deadline"] and item["fired"] > item["due"]
