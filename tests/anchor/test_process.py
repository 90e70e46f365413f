"""The anchor as real processes: ``gitive anchor start|status|stop``, a real clock file, a kill -9 mid-tick, and an
obligation an agent wrote over MCP (the SDK's client against ``gitive mcp``) fired on a merge made elsewhere."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testing.anchor import MERGED, AnchoredTeam, firing_entries, merge, owe, push_branch
from testing.live import wait_for
from testing.machines import Machine

GITIVE = Path(sys.executable).with_name("gitive")


def _env(machine: Machine, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    return {**env, "GITIVE_HOME": str(machine.home), **extra}


def _gitive(machine: Machine, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(GITIVE), *args], cwd=machine.clone, env=_env(machine, **extra), text=True,
                          capture_output=True, timeout=120)


@contextlib.contextmanager
def _anchor_process(machine: Machine, *extra_args: str, **env: str) -> Iterator[subprocess.Popen[str]]:
    """``python -m gitive.anchor`` (what start and the service run), in its own process group."""
    proc = subprocess.Popen([sys.executable, "-m", "gitive.anchor", "--repo", str(machine.clone), *extra_args],
                            cwd=machine.clone, env=_env(machine, **env), stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def _status(machine: Machine) -> dict[str, Any]:
    result = _gitive(machine, "anchor", "status", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _ticked(machine: Machine, since: int, ticks: int = 1) -> bool:
    run = _status(machine)["run"]
    return bool(run and run["started"] >= since and run["ticks"] >= ticks)


def _queue(machine: Machine) -> list[dict[str, Any]]:
    result = _gitive(machine, "anchor", "status", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["queue"]


def test_start_status_and_stop_with_the_real_command(team: AnchoredTeam) -> None:
    started = _gitive(team.anchor, "anchor", "start", "--interval", "1", "--json")
    assert started.returncode == 0, started.stderr
    pid = json.loads(started.stdout)["pid"]
    try:
        again = _gitive(team.anchor, "anchor", "start")
        assert again.returncode == 1 and "already runs" in again.stderr
        wait_for(lambda: _ticked(team.anchor, 0, 2), "two ticks")
        status = _status(team.anchor)
        assert status["running"] and status["pid"] == pid
        text = _gitive(team.anchor, "anchor", "status").stdout
        assert f"anchor running (pid {pid})" in text and "item(s) queued for the gate" in text
    finally:
        stopped = _gitive(team.anchor, "anchor", "stop", "--json")
    assert json.loads(stopped.stdout) == {"stopped": pid}
    assert "not running" in _gitive(team.anchor, "anchor", "status").stdout
    refused = _gitive(team.bob, "anchor", "start")
    assert refused.returncode == 1 and "not the team's anchor" in refused.stderr


def test_a_real_anchor_fires_a_deadline_when_its_clock_file_says_so(team: AnchoredTeam, tmp_path: Path) -> None:
    now = int(time.time() * 1000)
    clock = tmp_path / "clock"
    clock.write_text(str(now))
    deadline = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now / 1000 + 3 * 3600))
    record = owe(team.bob, 'e.event.action == "vcs.tag_created"', "tag the release", "--deadline", deadline)
    with _anchor_process(team.anchor, "--interval", "1", GITIVE_CLOCK_FILE=str(clock)):
        wait_for(lambda: _ticked(team.anchor, now), "a first tick")
        assert _queue(team.anchor) == []
        clock.write_text(str(record["deadline"] + 1_000))  # four hours pass on the anchor's clock
        queue = wait_for(lambda: _queue(team.anchor), "the deadline to fire")
    assert [(q["kind"], q["obligation"], q["due"]) for q in queue] == [
        ("obligation.due", record["id"], record["deadline"])]


def test_kill_9_mid_tick_never_fires_twice(team: AnchoredTeam) -> None:
    push_branch(team.alice, "big-merge")
    records = [owe(team.bob, MERGED.format(branch="big-merge"), f"follow-up {i}", "--no-push") for i in range(6)]
    team.bob.ok("sync")
    merge(team.alice, "big-merge")
    with _anchor_process(team.anchor, "--interval", "1", GITIVE_ANCHOR_STEP_DELAY_MS="400") as slow:
        wait_for(lambda: len(firing_entries(team.anchor)) >= 2, "two firings", timeout=60)
        os.killpg(slow.pid, signal.SIGKILL)  # mid-tick: some firings written, the rest not, no cursor saved
        slow.wait(timeout=10)
    partial = len(firing_entries(team.anchor))
    assert 2 <= partial < len(records)
    with _anchor_process(team.anchor, "--interval", "1"):
        wait_for(lambda: len(firing_entries(team.anchor)) >= len(records), "every firing", timeout=60)
        time.sleep(2.5)  # two more ticks: nothing fires again
    fired = [f["obligation"] for f in firing_entries(team.anchor) if f["reason"] == "condition"]
    assert sorted(fired) == sorted(r["id"] for r in records)
    assert sorted(q["obligation"] for q in _queue(team.anchor)) == sorted(r["id"] for r in records)


@pytest.mark.anyio
async def test_an_obligation_an_agent_wrote_over_mcp_fires_on_a_merge_made_elsewhere(team: AnchoredTeam) -> None:
    from mcp import Client, StdioServerParameters

    push_branch(team.alice, "auth-rotation")
    params = StdioServerParameters(command=str(GITIVE), args=["mcp"], env=_env(team.bob), cwd=str(team.bob.clone))
    async with Client(params, read_timeout_seconds=60) as client:
        bad = await client.call_tool("owe", {"to": "alice", "condition": 'e.event.action == "vcs.merged" && '
                                             'e.branch == "auth-rotation"', "action": "remove the grace period"})
        assert bad.is_error and "did you mean e.vcs.branch?" in bad.content[0].text
        done = await client.call_tool("owe", {"to": "alice", "condition": MERGED.format(branch="auth-rotation"),
                                              "action": "remove the grace period", "files": ["src/auth.py"]})
        assert not done.is_error, done.content
        owed = (await client.call_tool("owed", {"person": "bob"})).structured_content
    assert owed["total"] == 1 and owed["obligations"][0]["evaluation"]["value"] == "unsatisfied"
    ident = done.structured_content["id"]
    merge(team.alice, "auth-rotation")
    ran = _gitive(team.anchor, "anchor", "run", "--once", "--json")
    assert ran.returncode == 0, ran.stderr
    report = json.loads(ran.stdout)
    assert [f["obligation"][:16] for f in report["fired"]] == [ident]
    assert report["fired"][0]["owner"] == "bob" and report["fired"][0]["to"] == "alice"


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
