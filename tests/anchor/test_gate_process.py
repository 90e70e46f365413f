"""End to end with real processes: the anchor (``python -m gitive.anchor`` on a controllable clock), bob's daemon
(``gitive daemon start``), bob's Claude Code session through the installed ``gitive-hook``, and the CLI.

An obligation fires on the anchor; bob's daemon, on another machine, shows it at the session's next turn after a
breakpoint (a test run) and in ``gitive inbox``; ``gitive why`` explains it. A second item during bob's quiet
hours is held, and delivered when they end on the anchor's clock.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from testing import live
from testing.anchor import MERGED, AnchoredTeam, firing_entries, merge, owe, push_branch
from testing.machines import Machine
from testing.people import PASSPHRASE
from tests.anchor.test_gate_tick import ledger_entries
from tests.anchor.test_process import GITIVE, _anchor_process, _env

HOUR = 3_600_000


@contextlib.contextmanager
def _running_clock(path: Path) -> Iterator[list[int]]:
    """The anchor's clock file, following the real clock plus an offset the test may move (``offset[0]``)."""
    offset, stop = [0], threading.Event()

    def run() -> None:
        while not stop.is_set():
            path.write_text(str(int(time.time() * 1000) + offset[0]))
            stop.wait(0.1)

    path.write_text(str(int(time.time() * 1000)))
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield offset
    finally:
        stop.set()
        thread.join(timeout=5)


def _cli(machine: Machine, *args: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(GITIVE), *args], cwd=machine.clone, env=_env(machine), text=True,
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done


def _notice(machine: Machine, session: str) -> str | None:
    """The next hook call of ``session``: the anchor's notice in its context, if one came."""
    out = live.hook_process(machine, "post-tool", live.read(machine, session)).out
    context = live.context_of(out) if out else None
    return context if context and 'from="anchor"' in context else None


def _delivered(machine: Machine, item: str) -> list[dict[str, Any]]:
    rows = json.loads(_cli(machine, "inbox", "--items", "--json").stdout)
    return [r for r in rows if r["item"] == item and r["state"] == "shown"]


def test_an_obligation_reaches_the_persons_session_at_its_next_turn_and_quiet_hours_hold_the_next(
        team: AnchoredTeam, tmp_path: Path) -> None:
    now = int(time.time() * 1000)
    clock = tmp_path / "clock"
    subprocess.run([str(GITIVE), "gate", "live", "--passphrase-stdin"], cwd=team.bob.clone, env=_env(team.bob),
                   input=PASSPHRASE + "\n", text=True, check=True, capture_output=True, timeout=120)
    for branch in ("first-work", "second-work"):
        push_branch(team.alice, branch, path=f"{branch}.py")
    first = owe(team.bob, MERGED.format(branch="first-work"), "tell alice the first work is in", "--to", "alice")
    second = owe(team.bob, MERGED.format(branch="second-work"), "tell alice the second work is in", "--to", "alice")
    live.hook_process(team.bob, "session-start", live.session_start(team.bob, "s1"))
    with _running_clock(clock) as offset, live.real_daemon(team.bob, interval=1), \
            _anchor_process(team.anchor, "--interval", "1", GITIVE_CLOCK_FILE=str(clock)):
        live.wait_for(lambda: _ran(team.anchor), "the anchor's baseline")
        merge(team.alice, "first-work")
        live.wait_for(lambda: [e for e in ledger_entries(team.anchor) if e["branch"] == "attention"],
                      "the gate's decision", timeout=60)
        item = next(f["item"] for f in firing_entries(team.anchor) if f["obligation"] == first["id"])
        live.wait_for(lambda: _waiting(team.bob, item), "bob's daemon to take the delivery", timeout=60)
        live.hook_process(team.bob, "post-tool", live.bash(team.bob, "s1", "python -m pytest -q", "3 passed"))  # a breakpoint
        notice = live.wait_for(lambda: _notice(team.bob, "s1"), "the notice at the session's next turn", timeout=30)
        assert "tell alice the first work is in" in notice and item[:12] in notice
        assert _delivered(team.bob, item)
        why = json.loads(_cli(team.bob, "why", item[:12], "--json").stdout)
        assert why["delivered"] and why["decisions"][0]["branch"] == "attention"
        assert why["decisions"][0]["because"][0]["rule"] == "owed-to" and why["shown"]["state"] == "shown"

        # Quiet hours on the anchor's clock, from an hour ago to two hours ahead.
        start, end = (time.strftime("%H:%M", time.gmtime(now / 1000 + d)) for d in (-3600, 7200))
        subprocess.run([str(GITIVE), "prefs", "set", "--quiet", f"{start}-{end}", "--tz", "UTC",
                        "--passphrase-stdin"], cwd=team.bob.clone, env=_env(team.bob), input=PASSPHRASE + "\n",
                       text=True, check=True, capture_output=True, timeout=120)
        live.wait_for(lambda: _anchor_has_prefs(team.anchor), "the anchor to read bob's quiet hours", timeout=60)
        merge(team.alice, "second-work")
        held = live.wait_for(lambda: [e for e in ledger_entries(team.anchor) if e["branch"] == "hold"],
                             "the second item held", timeout=60)[0]
        later = next(f["item"] for f in firing_entries(team.anchor) if f["obligation"] == second["id"])
        assert held["item"] == later and held["until"] > now
        offset[0] = held["until"] + 60_000 - int(time.time() * 1000)  # quiet hours end on the anchor's clock
        live.wait_for(lambda: [e for e in ledger_entries(team.anchor) if e["item"] == later
                               and e["branch"] == "attention"], "the held item re-entering the gate", timeout=60)
        live.wait_for(lambda: _waiting(team.bob, later), "bob's daemon to take it", timeout=60)
        live.hook_process(team.bob, "post-tool", live.bash(team.bob, "s1", "pytest tests/", "3 passed"))
        notice = live.wait_for(lambda: _notice(team.bob, "s1"), "the second notice", timeout=30)
        assert "the second work is in" in notice
    why = _cli(team.bob, "why", later[:12]).stdout
    assert "held" in why and "quiet hours" in why and "attention" in why


def _ran(machine: Machine) -> bool:
    result = subprocess.run([str(GITIVE), "anchor", "status", "--json"], cwd=machine.clone, env=_env(machine),
                            text=True, capture_output=True, timeout=60)
    run = json.loads(result.stdout).get("run") if result.returncode == 0 else None
    return bool(run and run["ticks"] >= 1)


def _waiting(machine: Machine, item: str) -> bool:
    with live.daemon_db(machine) as db:
        try:
            return db.execute("SELECT 1 FROM anchor_items WHERE item = ?", (item,)).fetchone() is not None
        except Exception:  # the table is made by the daemon's first take
            return False


def _anchor_has_prefs(machine: Machine) -> bool:
    from gitive.anchor.gate import prefs
    from gitive.index.refresh import fresh_index
    from gitive.team.hive import open_hive

    with live.on(machine), fresh_index(open_hive(machine.clone)) as (index, _):
        return prefs.current(index, "bob").quiet is not None
