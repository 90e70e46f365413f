"""A large ingest verifies in worker processes and indexes exactly what the serial path does."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitive.index import db, ingest
from gitive.team.hive import open_hive
from testing.machines import Fleet


def _index(tmp_path: Path, name: str, hive) -> list[tuple]:
    with db.connect(tmp_path / f"{name}.sqlite") as conn:
        report = ingest.ingest(conn, hive.stores(), hive.team_id, hive.founder, hive.me)
        assert report.problems == []
        return conn.execute("SELECT author, log, seq, commit_id, kind, envelope FROM entries "
                            "ORDER BY author, log, seq").fetchall() + conn.execute(
            "SELECT machine, person, active FROM members ORDER BY machine").fetchall()


def test_parallel_and_serial_ingest_agree(tmp_path: Path, bare_remote: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    alice, bob = Fleet(tmp_path / "fleet").team(bare_remote, ("alice", "lap"), ("bob", "desk"))
    for machine in (alice, bob):
        for i in range(40):
            machine.append({"type": "team", "name": f"{machine.name}-{i}", "founder": machine.id})
        machine.ok("sync")
    alice.ok("sync")
    monkeypatch.setenv("GITIVE_HOME", str(alice.home))
    hive = open_hive(alice.clone)
    serial = _index(tmp_path, "serial", hive)
    monkeypatch.setattr(ingest, "PARALLEL_FROM", 1)
    calls: list[int] = []
    monkeypatch.setattr(ingest, "_estimate", lambda conn, work: calls.append(len(work)) or 10**6)
    parallel = _index(tmp_path, "parallel", hive)
    assert calls and calls[0] >= 2  # the parallel path was taken
    assert parallel == serial
    assert len([r for r in serial if len(r) == 6 and r[4] == "team"]) >= 80
