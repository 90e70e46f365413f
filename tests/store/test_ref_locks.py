"""Ref locks left by writers that died or froze: a dead recorded holder's lock goes at once, a stopped or
stuck one is named and never taken from it, and a lock nobody recorded goes once it is old.

The holders are real processes that take the lock through :func:`gitive.store.refs.set_if_equals` and then
kill or stop themselves while they hold it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pygit2
import pytest

from gitive.constants import STALE_LOCK_SECONDS
from gitive.errors import RaceLost, RefLocked
from gitive.store import logs, refs
from testing.builders import TEAM_ID, TEAM_SCOPE, machine

ME = machine("writer")
REF = refs.log_ref(ME.id, "team")

# Takes the ref lock through set_if_equals, records itself, then signals itself while holding the lock.
HOLDER = """
import os, sys, pygit2
from gitive.store import refs
repo, name, sig = pygit2.Repository(sys.argv[1]), sys.argv[2], int(sys.argv[3])
read = refs.tip
def tip(r, n):
    print("locked", flush=True)
    os.kill(os.getpid(), sig)
    return read(r, n)
refs.tip = tip
refs.set_if_equals(repo, name, read(repo, name), read(repo, name) or "0" * 40, "holder")
"""


def append(repo: pygit2.Repository, name: str) -> logs.Entry:
    return logs.append(repo, ME.key, TEAM_ID, "team", TEAM_SCOPE, {"type": "team", "name": name,
                                                                    "founder": ME.id}, at=1_700_000_000_000)


@pytest.fixture
def holder(bare_repo: pygit2.Repository) -> Iterator[object]:
    started: list[subprocess.Popen[bytes]] = []

    def start(sig: int) -> subprocess.Popen[bytes]:
        proc = subprocess.Popen([sys.executable, "-c", HOLDER, bare_repo.path, REF, str(sig)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        started.append(proc)
        assert proc.stdout is not None and proc.stdout.readline() == b"locked\n", proc.stderr
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # wait until the signal took effect
            state = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            if state in ("Z", "T", "t"):
                return proc
            time.sleep(0.005)
        raise AssertionError(f"holder never reached its signal (state {state})")

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()


def lock_of(repo: pygit2.Repository) -> Path:
    return Path(repo.path) / f"{REF}.lock"


def test_a_dead_recorded_holder_is_named_and_its_lock_removed_at_once(bare_repo: pygit2.Repository,
                                                                     holder) -> None:
    first = append(bare_repo, "one")
    proc = holder(signal.SIGKILL)  # dies holding the lock (a zombie until reaped: still dead)
    found = refs.lock_holder(bare_repo, REF)
    assert found is not None and found.pid == proc.pid and found.state == "dead" and found.stale
    assert found.age < STALE_LOCK_SECONDS
    started = time.monotonic()
    assert append(bare_repo, "two").seq == 2
    assert time.monotonic() - started < 2  # not the 30 s of an unrecorded lock
    assert not lock_of(bare_repo).exists()
    assert logs.entries(bare_repo, REF)[0].commit == first.commit
    [line] = (Path(bare_repo.path) / "gitive" / refs.RECOVERED_LOG).read_text().splitlines()
    assert f"removed {REF}.lock: pid {proc.pid} (-c " in line and "which died" in line


def test_a_reaped_holder_is_dead_too(bare_repo: pygit2.Repository, holder) -> None:
    append(bare_repo, "one")
    proc = holder(signal.SIGKILL)
    proc.wait(timeout=10)
    assert refs.lock_holder(bare_repo, REF).state == "dead"
    assert append(bare_repo, "two").seq == 2


def test_a_stopped_holder_is_named_and_its_lock_kept(bare_repo: pygit2.Repository, holder,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    first = append(bare_repo, "one")
    proc = holder(signal.SIGSTOP)
    monkeypatch.setattr(refs, "STALE_LOCK_SECONDS", 0)  # however old: a live holder may still rename its lock
    monkeypatch.setattr(refs, "_HELD_LONG_SECONDS", 0)
    started = time.monotonic()
    with pytest.raises(RefLocked) as raised:
        append(bare_repo, "two")
    assert time.monotonic() - started < 2
    message = str(raised.value)
    assert f"pid {proc.pid}" in message and "stopped" in message and "kill -CONT" in message
    assert "\n" not in message and "kept moving" not in message
    assert isinstance(raised.value, RaceLost)
    assert lock_of(bare_repo).exists() and refs.tip(bare_repo, REF) == first.commit
    proc.kill()
    proc.wait(timeout=10)
    assert append(bare_repo, "two").seq == 2  # once it is gone, the next writer clears its lock


def test_a_pid_reused_by_another_process_is_not_the_holder(bare_repo: pygit2.Repository, holder) -> None:
    append(bare_repo, "one")
    holder(signal.SIGSTOP)
    note = next((Path(bare_repo.path) / "gitive" / "ref-locks").iterdir())
    text = note.read_text()
    note.write_text(text.replace('"started": "', '"started": "1'))  # as if the pid now ran something else
    assert refs.lock_holder(bare_repo, REF).state == "dead"


def test_an_unrecorded_lock_is_explained_then_removed_when_old(bare_repo: pygit2.Repository) -> None:
    first = append(bare_repo, "one")
    lock = lock_of(bare_repo)
    lock.write_text("0" * 40 + "\n")  # as `git update-ref` would leave it
    recent = time.time() - 5
    os.utime(lock, (recent, recent))
    with pytest.raises(RefLocked, match="no holder recorded") as raised:
        append(bare_repo, "two")
    assert str(lock) in str(raised.value) and f"{STALE_LOCK_SECONDS} s" in str(raised.value)
    assert refs.tip(bare_repo, REF) == first.commit
    old = time.time() - STALE_LOCK_SECONDS - 1
    os.utime(lock, (old, old))
    assert append(bare_repo, "two").seq == 2


def test_a_note_left_by_an_earlier_holder_is_ignored(bare_repo: pygit2.Repository, holder) -> None:
    append(bare_repo, "one")
    proc = holder(signal.SIGKILL)
    proc.wait(timeout=10)
    lock = lock_of(bare_repo)
    lock.unlink()  # someone cleared the lock; a new, unrecorded one takes its place
    lock.write_text("0" * 40 + "\n")
    found = refs.lock_holder(bare_repo, REF)
    assert found is not None and found.pid is None and not found.stale


def test_a_successful_update_leaves_no_note(bare_repo: pygit2.Repository) -> None:
    append(bare_repo, "one")
    append(bare_repo, "two")
    notes = Path(bare_repo.path) / "gitive" / "ref-locks"
    assert not notes.exists() or list(notes.iterdir()) == []
