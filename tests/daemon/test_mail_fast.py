"""Messages in seconds at the default 30 s interval: a live session makes the daemon probe the remote's mail
refs (``git ls-remote``) every few seconds and sync only when they moved; a sent message is pushed at once;
an idle daemon asks nothing between its interval syncs; a running daemon answers ``gitive sync``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from testing import live
from testing.machines import Machine
from tests.daemon.test_live import begin, queued

GITIVE = Path(sys.executable).with_name("gitive")


def _status(machine: Machine) -> dict:
    return machine.json("daemon", "status")


def test_a_message_arrives_in_seconds_at_the_default_interval(pair: list[Machine], remote: Path) -> None:
    a, b = pair
    begin(a, "sa")
    with live.real_daemon(a, interval=30):
        live.wait_for(lambda: _status(a).get("live_sessions"), "a's daemon to see a live session")
        live.wait_for(lambda: (live.published_presence(remote, a) or {}).get("sessions"),
                      "a's presence on the remote")
        b.ok("sync")
        live.wait_for(lambda: _status(a)["requests"]["probe"] >= 1, "a's daemon probing")
        started = time.monotonic()
        sent = b.json("send", "alice/a-claude", "are you on the auth branch?", "--from", "bob/b-claude")
        assert sent["pushed_to"] == ["origin"]  # out at once, no daemon on b needed
        assert queued(a, 1) == [sent["id"]]
        elapsed = time.monotonic() - started
        # The interval is 30 s: only the probe can bring it this soon (2 s between probes, plus a sync).
        assert elapsed < 15, f"the message took {elapsed:.1f} s"
        assert _status(a)["requests"]["fetch"] >= 1


def test_an_idle_daemon_does_not_probe(pair: list[Machine]) -> None:
    a, _ = pair
    with live.real_daemon(a, interval=30):
        live.wait_for(lambda: any(h.get("last_sync") for h in (_status(a).get("hives") or {}).values()),
                      "a's first sync")
        time.sleep(6)  # more than two probe periods
        status = _status(a)
        assert status["live_sessions"] == 0 and status["requests"]["probe"] == 0


def test_a_probe_that_sees_nothing_new_fetches_nothing(pair: list[Machine]) -> None:
    a, _ = pair
    begin(a, "sa")
    with live.real_daemon(a, interval=30):
        live.wait_for(lambda: _status(a)["requests"]["probe"] >= 3, "three probes", timeout=30)
        first = _status(a)["requests"]
        live.wait_for(lambda: _status(a)["requests"]["probe"] >= first["probe"] + 2, "two more probes",
                      timeout=30)
        assert _status(a)["requests"]["fetch"] == first["fetch"]  # nothing moved: no fetch


def test_gitive_sync_is_answered_by_a_running_daemon(pair: list[Machine]) -> None:
    a, b = pair
    with live.real_daemon(a, interval=30):
        live.wait_for(lambda: any(h.get("last_sync") for h in (_status(a).get("hives") or {}).values()),
                      "a's first sync")
        before = _status(a)["requests"]["fetch"]
        b.append({"type": "team", "name": "news from b", "founder": b.id})
        b.ok("sync")
        env = {"GITIVE_HOME": str(a.home), "PATH": "/usr/bin:/bin", "HOME": str(a.home)}
        env.update({k: v for k, v in os.environ.items() if k.startswith("GIT_")})
        done = subprocess.run([str(GITIVE), "sync", "--json"], cwd=a.clone, capture_output=True, text=True,
                              env=env, timeout=60)
        assert done.returncode == 0, done.stderr
        report = json.loads(done.stdout)
        assert report["ok"] and report["received"] >= 1 and report["team"]["id"] == a.team_id
        assert _status(a)["requests"]["fetch"] > before  # the daemon did the fetch
        text = subprocess.run([str(GITIVE), "sync"], cwd=a.clone, capture_output=True, text=True, env=env,
                              timeout=60)
        assert text.returncode == 0 and "received 0 new entries" in text.stdout
