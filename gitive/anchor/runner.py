"""Running the anchor: one per ``$GITIVE_HOME`` (a lock), a tick every ``interval`` seconds, stopped by a signal.

``gitive anchor run`` runs this in the foreground; ``gitive anchor start`` starts it in the background (and
``gitive install --service --anchor`` as a user service). Everything it needs survives a kill at any moment:
cursors and the queue are in SQLite, firings are records in git, and the next run replays from the cursors.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from gitive.anchor.base import state
from gitive.anchor.base.configuration import Config
from gitive.anchor.config import load as load_config
from gitive.anchor.telling import describe
from gitive.anchor.tick import Anchor, TickReport, tick
from gitive.core import pidlock
from gitive.core.clock import now_ms
from gitive.core.home import ensure_home
from gitive.errors import GitiveError
from gitive.team.hive import Hive, open_hive

LOCK = "anchor.lock"
LOG = "anchor.log"


class AlreadyRunning(GitiveError):
    pass


def acquire_lock(home: Path) -> TextIO:
    """Hold ``anchor.lock`` while this process lives.

    Raises:
        AlreadyRunning: another anchor runs for this ``$GITIVE_HOME``.
    """
    try:
        return pidlock.acquire(home / LOCK)
    except pidlock.Held as held:
        raise AlreadyRunning(f"an anchor already runs for {home} (pid {held.pid}); `gitive anchor stop` stops it") \
            from None


def holder(home: Path) -> int | None:
    """The pid of the anchor holding the lock, or None when none does."""
    return pidlock.holder(home / LOCK)


def require_anchor(hive: Hive) -> None:
    """Only the team's anchor machine runs the tick: readers count firings only when an anchor signed them.

    Raises:
        GitiveError: this machine is not an active anchor member.
    """
    from gitive.index.refresh import fresh_index

    with fresh_index(hive) as (conn, _):
        row = conn.execute("SELECT role, active FROM members WHERE machine = ?", (hive.me,)).fetchone()
    if not row or row[0] != "anchor" or not row[1]:
        raise GitiveError("this machine is not the team's anchor: an admin runs `gitive invite --anchor`, and an "
                          "always-on machine joins with that code (docs/anchor.md)")




def run(repo: str | None = None, *, interval: float | None = None, once: bool = False,
        say: Callable[[str], None] | None = None, config: Config | None = None) -> list[TickReport]:
    """Tick until stopped (SIGTERM, SIGINT, SIGHUP), or once; return the reports (once: that one).

    Raises:
        GitiveError: not an anchor machine, another anchor runs here, or the config is wrong.
    """
    home = ensure_home()
    hive = open_hive(repo)
    config = config or load_config()
    require_anchor(hive)
    lock = acquire_lock(home)
    anchor = Anchor(hive, config, now_ms(), inline=once)
    stop = threading.Event()
    if not once and threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, lambda *_: stop.set())
    with state.connect(anchor.state_path) as st:
        state.run_started(st, anchor.started, os.getpid())
    reports: list[TickReport] = []
    try:
        while not stop.is_set():
            try:
                report = tick(anchor)
            except Exception as exc:  # one bad tick (a git error, a full disk) must not end the service
                if once:
                    raise
                if say:
                    say(f"tick failed: {type(exc).__name__}: {exc}")
                stop.wait(interval if interval is not None else config.interval)
                continue
            with state.connect(anchor.state_path) as st:
                state.run_ticked(st, anchor.started, report.at, _summary(report))
            line = describe(report)
            if say and line:
                say(line)
            if once:
                return [report]
            reports = [*reports[-10:], report]
            stop.wait(interval if interval is not None else config.interval)
    finally:
        lock.seek(0)
        lock.truncate()
        lock.close()
    return reports


def _summary(report: TickReport) -> dict[str, Any]:
    return {"at": report.at, "idle": report.idle, "events": report.events, "evaluations": report.evaluations,
            "fired": len(report.fired), "verdicts": len(report.verdicts), "unreachable": report.unreachable,
            "problems": report.problems, "ms": report.ms}


def main(argv: list[str] | None = None) -> int:
    """``python -m gitive.anchor --repo PATH [--interval S]``: what ``gitive anchor start`` and services run."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m gitive.anchor")
    parser.add_argument("--repo", default=None)
    parser.add_argument("--interval", type=float, default=None)
    args = parser.parse_args(argv)

    def say(line: str) -> None:
        print(json.dumps({"at": now_ms(), "tick": line}), flush=True)

    try:
        run(args.repo, interval=args.interval, say=say)
    except GitiveError as exc:
        print(f"gitive anchor: {exc}", file=sys.stderr, flush=True)
        return 1
    return 0
