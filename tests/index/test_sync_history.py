"""Sync history: every `gitive sync` leaves one line (what moved, what failed, how old arrivals were), the file
stays bounded, a torn line is skipped, and `gitive index rebuild` keeps it."""

from __future__ import annotations

from pathlib import Path

from gitive.index import sync_history
from gitive.team.hive import open_hive
from testing import fixtures
from testing.lessons import propose
from testing.live import on
from testing.machines import Machine


def _history(machine: Machine) -> list[dict]:
    with on(machine):
        return sync_history.read(open_hive(machine.clone))


def test_each_sync_is_recorded_with_latency_for_new_arrivals_only(pair: tuple[Machine, Machine]) -> None:
    a, b = pair
    before = len(_history(b))
    fixtures.commit_file(a.clone, "api.proto", "syntax = 'proto3';\n", "schema")
    propose(a, "Run make gen after editing api.proto", evidence=("file:api.proto",))
    a.ok("sync")
    b.ok("sync")
    rounds = _history(b)
    assert len(rounds) == before + 1
    last = rounds[-1]
    assert last["ok"] is True and last["received"] >= 1 and last["fetched"]["origin"] >= 1
    assert last["latency"]["n"] >= 1 and 0 <= last["latency"]["p50"] <= last["latency"]["max"] < 60_000
    b.ok("sync")
    quiet = _history(b)[-1]
    assert quiet["received"] == 0 and quiet["latency"] is None


def test_an_unreachable_remote_is_recorded_as_a_failed_round(pair: tuple[Machine, Machine], tmp_path: Path) -> None:
    a, _ = pair
    a.git("remote", "set-url", "origin", str(tmp_path / "gone.git"))
    a.run("sync")
    last = _history(a)[-1]
    assert last["ok"] is False and "origin" in last["unreachable"]


def test_history_is_bounded_skips_torn_lines_and_survives_a_rebuild(pair: tuple[Machine, Machine],
                                                                     monkeypatch) -> None:
    a, _ = pair
    with on(a):
        hive = open_hive(a.clone)
        path = sync_history.history_path(hive)
        with open(path, "a") as f:
            f.write('{"at": 1, "torn"\n[1, 2]\n')
        a.ok("sync")
        assert all(isinstance(r["at"], int) for r in sync_history.read(hive))
        monkeypatch.setattr(sync_history, "MAX_BYTES", 4_000)
        for i in range(200):
            sync_history.record(hive, {"at": 10_000 + i, "ok": True, "padding": "x" * 40})
        assert path.stat().st_size <= 4_000 + 200
        kept = sync_history.read(hive, limit=1_000)
        assert kept[-1]["at"] == 10_199 and len(kept) < 200
    a.ok("index", "rebuild")
    assert _history(a)[-1]["at"] == 10_199
