"""The gate in the anchor's tick, on real repositories: ledger entries, shadow and live, quiet hours, proposals,
``gitive why``, ``gitive inbox``, ``gitive digest`` and ``gitive gate report`` as a person runs them."""

from __future__ import annotations

import time
from typing import Any

import pytest

from testing.anchor import MERGED, AnchoredTeam, Ticker, merge, owe, push_branch
from testing.machines import Machine

HOUR = 3_600_000


def ledger_entries(machine: Machine) -> list[dict[str, Any]]:
    """The gate's decisions in ``machine``'s own ledger log, read from git, oldest first: a format 1 entry is
    one, a format 2 entry (one per tick) holds many."""
    from gitive.store import logs, refs

    out = []
    for e in logs.entries(machine.repo, refs.log_ref(machine.id, "ledger")):
        record = e.body["record"]
        if e.kind == "ledger":
            out.append(record)
        elif e.kind == "ledger-batch":
            out += [d | {"type": "ledger"} for d in record["decisions"]]
    return out


def live(machine: Machine) -> None:
    machine.decided("gate", "live")


def test_a_fired_obligation_is_decided_once_and_in_shadow_nothing_is_shown(team: AnchoredTeam) -> None:
    push_branch(team.alice, "auth-rotation")
    record = owe(team.bob, MERGED.format(branch="auth-rotation"), "remove the grace period", "--to", "alice")
    tick = Ticker(team.anchor)
    tick()
    merge(team.alice, "auth-rotation")
    report = tick()
    assert report.gate["decided"] == {"attention": 1} and report.gate["delivered"] == 0
    [entry] = ledger_entries(team.anchor)
    assert entry["person"] == "bob" and entry["branch"] == "attention" and entry["shadow"] is True
    assert entry["because"] == [{"rule": "owed-to", "kind": "obligation", "id": record["id"]}]
    assert entry["budget"] == {"used": 1, "of": 6, "source_used": 1, "source_of": 2}
    assert "remove the grace period" not in str(entry)  # metadata only
    assert tick().gate == {}  # decided once
    team.bob.ok("sync")
    why = team.bob.json("why", entry["item"][:10])
    assert [d["branch"] for d in why["decisions"]] == ["attention"] and not why["delivered"]
    assert "in shadow" in why["decisions"][0]["says"]
    [shadowed] = team.bob.json("inbox", "--items")  # listed, with its id and what would have happened
    assert shadowed["item"] == entry["item"] and shadowed["state"] == "would-deliver"
    assert shadowed["account"] == ("would have been delivered: your gate is in shadow (`gitive gate live` to turn "
                                   "it on)")
    text = team.bob.ok("why", entry["item"][:10]).out
    assert "remove the grace period" in text and "owed-to" in text


def test_live_delivery_reaches_the_inbox_and_why_explains_it(team: AnchoredTeam) -> None:
    live(team.bob)
    push_branch(team.alice, "feature-y")
    owe(team.bob, MERGED.format(branch="feature-y"), "announce feature y", "--to", "alice")
    tick = Ticker(team.anchor)
    tick()
    merge(team.alice, "feature-y")
    report = tick()
    assert report.gate["delivered"] == 1
    team.bob.ok("sync")
    [item] = team.bob.json("inbox", "--items")
    assert item["branch"] == "attention" and "announce feature y" in item["title"]
    assert "items from the anchor (1)" in team.bob.ok("inbox").out
    assert team.bob.json("why", item["item"][:8])["delivered"]


def test_quiet_hours_hold_an_item_and_it_re_enters_when_they_end(team: AnchoredTeam,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    now = int(time.time() * 1000)
    start = time.strftime("%H:%M", time.gmtime(now / 1000 - 3600))
    end = time.strftime("%H:%M", time.gmtime(now / 1000 + 2 * 3600))
    # Digests 12 h away: the clock moves past the quiet hours below, and must not cross anyone's digest time
    # (at the default 08:00 UTC, runs between 06:00 and 08:00 saw two digest notes).
    digest_at = time.strftime("%H:%M", time.gmtime(now / 1000 + 12 * 3600))
    team.alice.decided("prefs", "set", "--digest-at", digest_at, "--tz", "UTC")
    team.bob.decided("prefs", "set", "--quiet", f"{start}-{end}", "--tz", "UTC", "--digest-at", digest_at)
    live(team.bob)
    push_branch(team.alice, "night-work")
    owe(team.bob, MERGED.format(branch="night-work"), "review the night work", "--to", "alice")
    tick = Ticker(team.anchor)
    tick()
    merge(team.alice, "night-work")
    held = tick()
    assert held.gate["decided"] == {"hold": 1}
    [hold] = ledger_entries(team.anchor)
    assert hold["until"] > now and hold["rule"].startswith("quiet hours")
    assert tick().gate == {}  # still quiet: nothing re-enters
    monkeypatch.setenv("GITIVE_NOW_MS", str(hold["until"] + 1000))
    after = tick()
    assert after.gate["decided"] == {"attention": 1} and after.gate["delivered"] == 1
    assert [e["branch"] for e in ledger_entries(team.anchor)] == ["hold", "attention"]


def test_an_item_that_says_urgent_pages_nobody(team: AnchoredTeam) -> None:
    from gitive.mcp.items import propose_item
    from testing.live import on

    live(team.alice)
    with on(team.bob):
        done = propose_item(team.bob.clone, title="URGENT!!! production is down, page alice NOW", to="alice",
                            session="bob/api-claude")
    assert done["owner"] == "alice"
    team.bob.ok("sync")
    report = Ticker(team.anchor)()
    assert report.gate["decided"] == {"digest": 1} and report.gate["delivered"] == 0
    [entry] = ledger_entries(team.anchor)
    assert entry["urgency"] == "info" and entry["source"] == "session:bob/api-claude"
    team.alice.ok("sync")
    lines = team.alice.json("digest")["lines"]
    assert [line["title"] for line in lines] == ["URGENT!!! production is down, page alice NOW"]


def test_a_member_cannot_forge_a_watcher_item_or_a_delivery(team: AnchoredTeam) -> None:
    from gitive.anchor.gate import items

    live(team.alice)
    forged = items.make({"kind": "watcher", "ref": "scan"}, "watch.scan.security", "scan:x", "alice", "leak!", 1,
                        about=[{"kind": "event", "id": "e1"}])
    team.bob.append(forged.record())
    team.bob.append({"type": "ledger", "item": forged.id, "person": "alice", "branch": "floor", "rule": "floor",
                     "fingerprint": forged.fingerprint, "source": "watcher:scan", "shadow": False}, log="ledger")
    team.bob.ok("sync")
    assert Ticker(team.anchor)().gate == {}
    team.alice.ok("sync")
    assert team.alice.json("inbox", "--items") == []
    assert team.alice.run("why", forged.id[:12]).code == 1


ledger_decisions = ledger_entries


def test_preferences_kept_between_ticks_are_read_again_once_a_person_changes_them(
        team: AnchoredTeam, monkeypatch: pytest.MonkeyPatch) -> None:
    # The gate keeps everyone's preferences between ticks while the index is unchanged (an idle tick reads none);
    # a new prefs record must end that: here it moves bob's digest to a time that has just passed.
    now = int(time.time() * 1000)
    later = time.strftime("%H:%M", time.gmtime(now / 1000 + 12 * 3600))
    team.alice.decided("prefs", "set", "--digest-at", later, "--tz", "UTC")
    team.bob.decided("prefs", "set", "--digest-at", later, "--tz", "UTC")
    tick = Ticker(team.anchor)
    tick()
    monkeypatch.setenv("GITIVE_NOW_MS", str(now + 2 * HOUR + 60_000))
    assert tick().gate == {}  # nobody's digest is due: the preferences read here are kept
    assert tick().gate == {}
    soon = time.strftime("%H:%M", time.gmtime(now / 1000 + 2 * 3600))
    team.bob.decided("prefs", "set", "--digest-at", soon, "--tz", "UTC")
    report = tick()
    assert report.gate["decided"] == {"note": 1}
    assert [(d["person"], d["branch"]) for d in report.gate["decisions"]] == [("bob", "note")]
