"""The ledger: exactly one entry per decision (a property over random candidates), and two anchors: both
ledgers replicate, the same item is delivered at most twice, recorded by both, and shown to its person once."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from testing import live
from testing.anchor import MERGED, AnchoredTeam, Ticker, merge, owe, push_branch
from testing.machines import Fleet, Machine
from tests.anchor.test_gate_tick import ledger_entries


def _gate_run(machine: Machine, candidates: list[Any], now: int) -> Any:
    from gitive.anchor.base import state
    from gitive.anchor.gate.gating import Gate
    from gitive.index.refresh import fresh_index
    from gitive.team.hive import open_hive

    with live.on(machine):
        hive = open_hive(machine.clone)
        with fresh_index(hive) as (index, _), state.connect(state.path_for(hive.store.path)) as st_:
            gate = Gate(hive, st_, index)
            for c in candidates:
                gate.offer_candidate(c)
            return gate.run(now)


candidate_specs = st.lists(st.tuples(st.sampled_from(["session", "dangling", "watcher"]),
                                     st.sampled_from(["alice", "bob"]),
                                     st.sampled_from(["x", "y", "z"]),  # few subjects: duplicates happen
                                     st.integers(0, 10**9)), min_size=1, max_size=25)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(specs=candidate_specs)
def test_every_decision_has_exactly_one_ledger_entry(team: AnchoredTeam, specs: list[tuple[str, str, str, int]]
                                                     ) -> None:
    from gitive.anchor.gate import items

    before = len(ledger_entries(team.anchor))
    now = int(time.time() * 1000)
    found = [items.make({"kind": kind, "ref": "r"}, f"{kind}.thing", subject, owner, f"title {n}", now,
                        about=[{"kind": "event", "id": str(n)}])
             for kind, owner, subject, n in specs]
    unique = {c.id: c for c in found}
    report = _gate_run(team.anchor, found, now)
    entries = ledger_entries(team.anchor)[before:]
    fresh = [c for c in unique.values() if c.id not in {e["item"] for e in ledger_entries(team.anchor)[:before]}]
    assert sum(report.decided.values()) == len(entries) == len(fresh)
    assert Counter(e["item"] for e in entries) == Counter(c.id for c in fresh)  # one each
    assert _gate_run(team.anchor, found, now).decided == {}  # offered again: nothing decided twice


def _second_anchor(team: AnchoredTeam) -> Machine:
    fleet = Fleet(team.base)
    code = fleet.invite(team.alice, "--anchor")
    second = fleet.machine("anchor2", team.remote)
    second.ok("join", code, "--machine", "anchor2")
    second.ok("anchor", "run", "--once")
    return second


def _tick_without_push(ticker: Ticker) -> Any:
    """A tick that fetches but cannot push (as when the remote went away mid-tick): a split between anchors."""
    from gitive.anchor.tick import TickReport, _fetch, tick

    with live.on(ticker.machine):
        _fetch(ticker.anchor, TickReport(at=0))
        return tick(ticker.anchor, fetch=False)


def test_two_anchors_split_deliver_at_most_twice_record_both_and_show_once(team: AnchoredTeam) -> None:
    from gitive.daemon import anchor_items

    second = _second_anchor(team)
    team.bob.decided("gate", "live")
    push_branch(team.alice, "shared-work")
    owe(team.bob, MERGED.format(branch="shared-work"), "ship the shared work", "--to", "alice")
    one, two = Ticker(team.anchor), Ticker(second)
    one(), two()
    merge(team.alice, "shared-work")
    first, other = _tick_without_push(one), _tick_without_push(two)
    assert first.gate["delivered"] == other.gate["delivered"] == 1
    one(), two()  # both push now
    team.bob.ok("sync")
    with live.on(team.bob):
        from gitive.index import ledger as ledger_reads
        from gitive.index.refresh import fresh_index
        from gitive.team.hive import open_hive

        with fresh_index(open_hive(team.bob.clone)) as (index, _):
            decided = ledger_reads.decisions(index, person="bob")
    assert len({d["item"] for d in decided}) == 1
    assert sorted(d["anchor"] for d in decided) == sorted([team.anchor.id, second.id])  # recorded by both
    [shown] = team.bob.json("inbox", "--items")
    assert shown["branch"] == "attention"
    with live.on(team.bob), live.daemon_db(team.bob) as db:
        assert db.execute("SELECT COUNT(*) FROM anchor_items").fetchone()[0] == 1
        assert anchor_items.show_due(db, team.bob.team_id, []) == [shown["item"]]  # shown once
        assert anchor_items.show_due(db, team.bob.team_id, []) == []


def test_a_second_anchor_that_saw_the_first_records_a_duplicate(team: AnchoredTeam) -> None:
    second = _second_anchor(team)
    team.bob.decided("gate", "live")
    push_branch(team.alice, "later-work")
    owe(team.bob, MERGED.format(branch="later-work"), "follow up", "--to", "alice")
    one, two = Ticker(team.anchor), Ticker(second)
    one(), two()
    merge(team.alice, "later-work")
    assert one().gate["delivered"] == 1
    item = ledger_entries(team.anchor)[-1]["item"]
    assert two().fired == []  # it sees the first anchor's firing, so it does not fire again
    # Offered the same item anyway (as a second firing in a split would): it records a duplicate, sends nothing.
    report = _gate_run(second, [_same_item(team, item)], int(time.time() * 1000))
    assert report.decided == {"duplicate": 1} and report.delivered == 0
    [entry] = [e for e in ledger_entries(second) if e["item"] == item]
    assert entry["branch"] == "duplicate" and team.anchor.id[:12] in entry["rule"]


def _same_item(team: AnchoredTeam, item: str) -> Any:
    from gitive.anchor.gate import items
    from gitive.store import logs, refs

    for e in logs.entries(team.anchor.repo, refs.log_ref(team.anchor.id, "ledger")):
        if e.kind == "item" and e.body["record"]["id"] == item:
            return items.verified(e.body["record"], team.anchor.id, anchor=True)
    raise AssertionError("the first anchor wrote no item record")
