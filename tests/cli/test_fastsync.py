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
