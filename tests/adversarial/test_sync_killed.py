"""A sync killed during its fetch does not stop later syncs (issue 23, seen item 9).

A laptop's sleep, an OOM kill or a closed terminal can ``kill -9`` a ``gitive sync`` while its ``git fetch``
holds the locks of the remote-tracking refs it is updating. Here the kill is real: a ``reference-transaction``
hook (git runs it while the locks are held) tells the test the fetch is inside its ref update, and the test
kills the whole process group, gitive and git both, with SIGKILL. The locks stay behind; the next sync must
succeed, and so must two syncs started at once afterwards.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from testing.lessons import GITIVE, person_env, propose
from testing.machines import Fleet, Machine

HOOK = """#!/bin/sh
# Hold git's ref locks for a while once a fetch into refs/hive-remotes is prepared, and say so.
if [ "$1" = prepared ] && grep -q hive-remotes; then
    touch "{marker}"
    sleep 120
fi
"""


def _locks(m: Machine) -> list[Path]:
    return sorted((m.clone / ".git" / "refs" / "hive-remotes").rglob("*.lock"))


def _sync(m: Machine) -> subprocess.Popen[bytes]:
    return subprocess.Popen([str(GITIVE), "sync"], cwd=m.clone, env=person_env(m.home), start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _kill_during_fetch(m: Machine, tmp: Path) -> None:
    hooks, marker = tmp / "hooks", tmp / "inside-fetch"
    hooks.mkdir()
    (hooks / "reference-transaction").write_text(HOOK.format(marker=marker))
    (hooks / "reference-transaction").chmod(0o755)
    m.git("config", "core.hooksPath", str(hooks))
    proc = _sync(m)
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the fetch never reached its ref update"
            time.sleep(0.02)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        m.git("config", "--unset", "core.hooksPath")


def test_a_sync_killed_during_its_fetch_does_not_stop_the_next_syncs(tmp_path: Path, bare_remote: Path) -> None:
    from tests.lessons.conftest import share_file

    a, b = Fleet(tmp_path / "fleet").team(bare_remote, ("alice", "a"), ("bob", "b"))
    share_file([a, b])
    first = propose(a, "The first lesson after the team formed")
    a.ok("sync")

    _kill_during_fetch(b, tmp_path)
    left = _locks(b)
    assert left, "the kill left no lock: the test did not reproduce a killed fetch"

    result = b.run("sync")
    assert result.code == 0, result
    assert not _locks(b)
    assert b.json("lessons", "show", first)["text"] == "The first lesson after the team formed"
    assert "removed" in (b.clone / ".git" / "gitive" / "ref-locks.log").read_text()

    second = propose(a, "A second lesson, for two syncs at once")
    a.ok("sync")
    both = [_sync(b), _sync(b)]
    outcomes = [(p.wait(timeout=120), p.communicate()) for p in both]
    assert [code for code, _ in outcomes] == [0, 0], outcomes
    assert b.json("lessons", "show", second)["text"] == "A second lesson, for two syncs at once"
