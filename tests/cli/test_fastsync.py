"""The no-op sync fast path answers only when there is truly nothing to do; anything else falls through."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

import pytest

from gitive.cli import fastsync
from testing.machines import Machine


def _fast(machine: Machine, monkeypatch: pytest.MonkeyPatch, *argv: str) -> tuple[int | None, str]:
    monkeypatch.setenv("GITIVE_HOME", str(machine.home))
    monkeypatch.chdir(machine.clone)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = fastsync.try_noop(["sync", *argv])
    return code, out.getvalue()


@pytest.fixture
def pair(pair: list[Machine]) -> list[Machine]:
    """The CLI tests' pair (alice founded, bob joined; restored, not founded again: tests/cli/conftest.py)."""
    for m in pair:
        m.ok("sync")  # settle: every ref ingested, upkeep stamp written
    return pair


def test_nothing_new_is_answered_without_the_full_command(pair, monkeypatch) -> None:
    code, out = _fast(pair[0], monkeypatch)
    assert code == 0 and "received 0 new entries" in out
    code, out = _fast(pair[0], monkeypatch, "--json")
    assert code == 0 and '"ok": true' in out


def test_an_unpushed_local_entry_falls_through(pair, monkeypatch) -> None:
    alice = pair[0]
    alice.append({"type": "team", "name": "x", "founder": alice.id})
    assert _fast(alice, monkeypatch)[0] is None


def test_a_peer_entry_to_ingest_falls_through(pair, monkeypatch) -> None:
    alice, bob = pair
    bob.append({"type": "team", "name": "y", "founder": bob.id})
    bob.ok("sync")
    assert _fast(alice, monkeypatch)[0] is None  # the fetch brought something the index has not seen
    alice.ok("sync")
    assert _fast(alice, monkeypatch)[0] == 0


def test_other_commands_and_an_unreachable_remote_fall_through(pair, monkeypatch) -> None:
    alice = pair[0]
    monkeypatch.setenv("GITIVE_HOME", str(alice.home))
    assert fastsync.try_noop(["sync", "--no-push"]) is None
    assert fastsync.try_noop(["log"]) is None
    alice.git("remote", "set-url", "origin", str(alice.clone.parent / "gone.git"))
    assert _fast(alice, monkeypatch)[0] is None


def test_outside_a_repository_falls_through(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert fastsync.try_noop(["sync"]) is None
    assert os.getcwd() == str(tmp_path)


def _child(machine: Machine) -> list[str]:
    """A real process's no-op sync: its answer, then which heavy modules it loaded."""
    import subprocess
    import sys

    code = ("import sys\nfrom gitive.cli.fastsync import try_noop\ncode = try_noop(['sync'])\n"
            "print(code, *[m for m in ('sqlite3', 'subprocess', 'typing', 'json') if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", code], cwd=machine.clone, capture_output=True, text=True,
                          env={**os.environ, "GITIVE_HOME": str(machine.home)}, check=True)
    return done.stdout.splitlines()[-1].split()


def test_a_repeated_no_op_needs_neither_the_index_nor_heavy_imports(pair) -> None:
    alice = pair[0]
    assert _child(alice) == ["0", "sqlite3"]  # the first asks the index and leaves a stamp
    assert _child(alice) == ["0"]  # the next ones trust the stamp: no sqlite3, subprocess, typing or json
    stamp = alice.clone / ".git" / "gitive" / "noop-sync.stamp"
    stamp.write_text("v0 something else\n")  # another version's stamp, or a torn one: the index is asked
    assert _child(alice) == ["0", "sqlite3"]
    assert stamp.read_text().startswith("v1 ")


def test_a_stamp_never_hides_new_entries(pair, monkeypatch) -> None:
    alice, bob = pair
    assert _fast(alice, monkeypatch)[0] == 0  # the stamp is written
    bob.append({"type": "team", "name": "y", "founder": bob.id})
    bob.ok("sync")
    assert _fast(alice, monkeypatch)[0] is None  # a fetched tip the stamp does not name
    alice.ok("sync")
    assert _fast(alice, monkeypatch)[0] == 0
    index = alice.clone / ".git" / "gitive" / "index.sqlite"
    for suffix in ("", "-wal", "-shm"):  # the index rebuilt from nothing: it must be asked, and it has no cursors
        index.with_name(index.name + suffix).unlink(missing_ok=True)
    import sqlite3

    sqlite3.connect(index).execute("CREATE TABLE cursors (store TEXT, ref TEXT, tip TEXT)").connection.close()
    assert _fast(alice, monkeypatch)[0] is None
