"""The anchor's tick on real repositories: a merge made by another machine fires an obligation, once."""

from __future__ import annotations

import time

import pytest

from testing.anchor import MERGED, AnchoredTeam, Ticker, firing_entries, merge, owe, owed, push_branch


def test_a_merge_pushed_by_another_machine_fires_the_obligation_once(team: AnchoredTeam) -> None:
    push_branch(team.alice, "auth-rotation")
    record = owe(team.bob, MERGED.format(branch="auth-rotation"), "remove the grace period")
    tick = Ticker(team.anchor)
    first = tick()
    assert not first.fired and first.events.get("log") and first.events.get("ref")
    merged = merge(team.alice, "auth-rotation")
    second = tick()
    assert [f["obligation"] for f in second.fired] == [record["id"]]
    item = second.fired[0]
    assert item["kind"] == "obligation.fired" and item["owner"] == "bob" and not item["late"]
    assert item["event"]["action"] == "vcs.merged"
    assert [q["id"] for q in tick.queue()] == [item["id"]]
    third = tick()
    assert third.fired == [] and third.evaluations == 0
    assert [f["obligation"] for f in firing_entries(team.anchor)] == [record["id"]]
    team.bob.ok("sync")
    shown = owed(team.bob)
    assert shown[0]["status"] == "fired" and shown[0]["evaluation"]["value"] == "satisfied"
    assert merged  # the merge commit the event names is on the remote's main


def test_an_idle_tick_evaluates_nothing(team: AnchoredTeam) -> None:
    push_branch(team.alice, "idle-branch")
    owe(team.bob, MERGED.format(branch="idle-branch"), "tidy up")
    tick = Ticker(team.anchor)
    tick()
    idle = tick()
    assert idle.idle and idle.events == {} and idle.evaluations == 0 and idle.fired == []


def test_a_branch_merged_and_deleted_on_the_host_still_fires(team: AnchoredTeam) -> None:
    push_branch(team.alice, "feature-x")
    record = owe(team.bob, MERGED.format(branch="feature-x"), "announce feature x")
    tick = Ticker(team.anchor)
    tick()
    merge(team.alice, "feature-x", delete=True)
    report = tick()
    assert [f["obligation"] for f in report.fired] == [record["id"]]
    assert report.events["ref"] >= 3  # main moved, feature-x deleted, feature-x merged


def test_an_obligation_is_not_satisfied_by_an_event_older_than_itself(team: AnchoredTeam) -> None:
    push_branch(team.alice, "early")
    tick = Ticker(team.anchor)
    tick()
    merge(team.alice, "early")
    tick()  # the merge is seen before anyone owes anything
    owe(team.bob, MERGED.format(branch="early"), "too late to matter")
    report = tick()
    assert report.fired == []


def test_after_downtime_the_anchor_replays_and_fires_late_with_both_times(team: AnchoredTeam) -> None:
    push_branch(team.alice, "while-down")
    record = owe(team.bob, MERGED.format(branch="while-down"), "remove the flag")
    Ticker(team.anchor)()  # the anchor sees the obligation, then goes down
    merge(team.alice, "while-down")
    restarted = Ticker(team.anchor)  # a new run: what happened while it was down is late
    report = restarted()
    assert [f["obligation"] for f in report.fired] == [record["id"]]
    item = report.fired[0]
    assert item["late"] and item["due"] <= item["fired"]  # both times: when it became due, when it fired
    team.bob.ok("sync")
    [shown] = owed(team.bob)
    assert "late" in shown["evaluation"]["reason"]
    assert shown["firings"]["condition"]["late"] is True


def test_obligations_written_while_the_anchor_is_down_are_evaluated_on_replay(team: AnchoredTeam) -> None:
    push_branch(team.alice, "replayed")
    record = owe(team.bob, MERGED.format(branch="replayed"), "ship it")
    merge(team.alice, "replayed")  # both the obligation and the merge happen while the anchor is down
    report = Ticker(team.anchor)()
    assert [f["obligation"] for f in report.fired] == [record["id"]]
    assert report.fired[0]["late"]


def test_presence_changes_are_events_session_started_and_ended(team: AnchoredTeam,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from testing import live

    started = owe(team.bob, 'e.event.action == "session.started" && e.session.person == "alice"', "say hello")
    ended = owe(team.bob, 'e.event.action == "session.ended" && e.session.address == "alice/alice-claude"',
                "pick up where alice left off")
    tick = Ticker(team.anchor)
    tick()
    live.hook(team.alice, "session-start", live.session_start(team.alice, "a-1"))
    live.publish_and_sync(team.alice)
    report = tick()
    assert report.events.get("presence") == 1
    assert [f["obligation"] for f in report.fired] == [started["id"]]
    # Alice's machine goes quiet: 31 minutes later her session counts as ended, snapshot or no snapshot.
    monkeypatch.setenv("GITIVE_NOW_MS", str(int(time.time() * 1000) + 31 * 60_000))
    report = tick()
    assert [f["obligation"] for f in report.fired] == [ended["id"]]
    assert report.fired[0]["event"]["action"] == "session.ended"
