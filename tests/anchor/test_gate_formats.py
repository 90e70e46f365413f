"""Ledger and item formats (docs/gate.md): format 2 writes one ledger entry per tick (more past 64 KiB), seals the
anchor's item titles; a format 1 ledger (one entry per decision, items with their titles in the clear), written
by an anchor before the change, still reads: ``gitive why``, the digest, the daemon's delivery and the anchor's
own mirror (duplicates and budgets), and an ``anchor.sqlite`` of the old schema migrates keeping its rows."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from gitive.anchor.base import state
from gitive.anchor.gate import digest, items, ledger
from gitive.anchor.gate.order import Decision
from gitive.index import db as index_db
from testing import live
from testing.anchor import MERGED, AnchoredTeam, Ticker, merge, owe, push_branch
from tests.anchor.test_gate_tick import ledger_entries

HOUR = 3_600_000


def _old_decision(team: AnchoredTeam, subject: str, person: str, now: int, branch: str = "attention") -> str:
    """What the anchor wrote before format 2: a format 1 item (title in the clear, the id it chose) and one
    ``ledger`` entry for its decision."""
    c = items.make({"kind": "dangling", "ref": "branch"}, "dangling.branch", subject, person,
                   f"old title about {subject}", now)
    record = c.record() | {"id": items.record_id("item", "dangling", "dangling.branch", subject)}
    team.anchor.append(record, log="ledger", at=now)
    decision = Decision(items.from_record(record) or c, person, branch, "attention: old rule", shadow=False,
                        urgency="attention", until=now + 600_000)
    team.anchor.append(decision.record(), log="ledger", at=now)
    return str(record["id"])


def test_a_format_1_ledger_still_reads_everywhere(team: AnchoredTeam) -> None:
    now = int(time.time() * 1000) - 60_000
    team.bob.decided("gate", "live")
    old = _old_decision(team, "origin/stale-work@abc", "bob", now)
    team.anchor.ok("sync")
    team.bob.ok("sync")
    why = team.bob.json("why", old[:12])
    assert [d["branch"] for d in why["decisions"]] == ["attention"] and why["delivered"]
    assert why["record"]["title"] == "old title about origin/stale-work@abc"
    assert "old title about origin/stale-work@abc" in team.bob.ok("why", old[:12]).out
    [shown] = team.bob.json("inbox", "--items")
    assert shown["item"] == old and shown["title"] == "old title about origin/stale-work@abc"
    # the anchor's mirror counts the old decision: bob's budget today has one attention item spent
    with live.on(team.anchor):
        from gitive.anchor.gate.gating import Gate
        from gitive.index.refresh import fresh_index
        from gitive.team.hive import open_hive

        hive = open_hive(team.anchor.clone)
        with fresh_index(hive) as (index, _), state.connect(state.path_for(hive.store.path)) as st:
            Gate(hive, st, index).run(now + 1000)
            rows = st.execute("SELECT item, n, branch FROM gate_decisions WHERE item = ?", (old,)).fetchall()
    assert rows == [(old, 0, "attention")]


def test_format_2_is_one_entry_per_tick(team: AnchoredTeam) -> None:
    for branch in ("w1", "w2", "w3"):
        push_branch(team.alice, branch, path=f"{branch}.py")
    obs = [owe(team.bob, MERGED.format(branch=b), f"follow up {b}", "--to", "alice") for b in ("w1", "w2")]
    obs.append(owe(team.alice, MERGED.format(branch="w3"), "follow up w3", "--to", "bob"))
    tick = Ticker(team.anchor)
    tick()
    for branch in ("w1", "w2", "w3"):
        merge(team.alice, branch)
    report = tick()
    assert sum(report.gate["decided"].values()) == 3
    from gitive.store import logs, refs

    entries = [e for e in logs.entries(team.anchor.repo, refs.log_ref(team.anchor.id, "ledger"))
               if e.kind in ("ledger", "ledger-batch")]
    [entry] = [e for e in entries if e.kind == "ledger-batch"]
    assert sorted(d["person"] for d in entry.body["record"]["decisions"]) == ["alice", "bob", "bob"]
    team.bob.ok("sync")
    decided = [d for d in ledger_entries(team.anchor) if d["person"] == "bob"]
    for d in decided:  # each decision is still addressed by its item
        why = team.bob.json("why", d["item"][:12])
        assert [s["branch"] for s in why["decisions"]] == [d["branch"]]
        assert why["decisions"][0]["n"] in (0, 1, 2) and why["decisions"][0]["seq"] == entry.seq


def test_batches_stay_under_the_entry_cap() -> None:
    c = items.make({"kind": "watcher", "ref": "ci"}, "watch.ci.failed", "ci:main", "bob", "t", 1)
    many = [Decision(items.make({"kind": "watcher", "ref": "ci"}, "watch.ci.failed", f"ci:{n}", "bob", "t", 1),
                     "bob", "digest", "digest: info " + "x" * 200, shadow=True) for n in range(1000)]
    found = ledger.batches([*many, Decision(c, "alice", "digest", "digest: info", shadow=True)])
    from gitive.core import canonical

    sizes = [len(canonical.dumps(record)) for record, _ in found]
    assert len(found) > 2 and max(sizes) < 70 * 1024
    assert [d for _, held in found for d in held][:1000] == many  # every decision, in order
    assert [d["person"] for record, _ in found for d in record["decisions"]][-1] == "alice"


def test_an_anchor_state_of_the_old_schema_migrates_keeping_its_decisions(tmp_path: Path) -> None:
    path = tmp_path / "anchor.sqlite"
    with index_db.connect(path, steps=state.STEPS[:2]) as conn:
        conn.execute("INSERT INTO gate_decisions VALUES ('a', 7, 'i', 'bob', 'f', 'attention', 'session:s', 5, "
                     "'2026-01-01')")
    with state.connect(path) as conn:
        rows = conn.execute("SELECT anchor, seq, n, item, branch FROM gate_decisions").fetchall()
        assert rows == [("a", 7, 0, "i", "attention")]
        assert ledger.attention_used(conn, "bob", "2026-01-01") == 1
        assert ledger.attention_on(conn, "2026-01-01") == ({"bob": 1}, {("bob", "session:s"): 1})
    with sqlite3.connect(path) as raw:
        applied = [r[0] for r in raw.execute("SELECT name FROM migrations ORDER BY rowid")]
        assert applied[-3:] == ["0003-gate-ledger-batch", "0004-gate-tick-reads", "0005-gate-last-note"]


def test_a_state_of_the_previous_schema_gains_the_note_index_and_keeps_its_notes(tmp_path: Path) -> None:
    path = tmp_path / "anchor.sqlite"
    with index_db.connect(path, steps=state.STEPS[:4]) as conn:
        conn.executemany("INSERT INTO gate_decisions VALUES ('a', ?, ?, ?, 'f', ?, 'digest', ?, '2026-01-01', 0)",
                         [(1, "i1", "bob", "note", 10), (2, "i2", "bob", "attention", 30), (3, "i3", "bob", "note", 20),
                          (4, "i4", "carol", "note", 40)])
    with state.connect(path) as conn:
        plan = conn.execute("EXPLAIN QUERY PLAN SELECT MAX(at) FROM gate_decisions WHERE person = ? AND "
                            "branch = 'note'", ("bob",)).fetchall()
        assert "gate_decisions_note" in str(plan)  # not a scan of every decision mirrored
        assert digest._last_note(conn, "bob") == 20
        assert digest._last_note(conn, "carol") == 40
        assert digest._last_note(conn, "dave") is None
