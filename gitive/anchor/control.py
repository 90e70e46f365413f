"""Starting, stopping and asking the anchor from commands that are not the anchor."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import Any

from gitive.anchor.base import state
from gitive.anchor.gate.queue import Queue
from gitive.anchor.runner import LOG, holder
from gitive.core.home import ensure_home, gitive_home
from gitive.errors import GitiveError
from gitive.team.hive import Hive


def start(repo: str, interval: float | None) -> int:
    """Start the anchor in the background; return its pid once it holds its lock.

    Raises:
        GitiveError: one already runs, or the new one exited (its log says why).
    """
    home = ensure_home()
    pid = holder(home)
    if pid:
        raise GitiveError(f"an anchor already runs for {home} (pid {pid}); `gitive anchor status` shows it")
    args = [sys.executable, "-m", "gitive.anchor", "--repo", repo]
    if interval is not None:
        args += ["--interval", str(interval)]
    with open(home / LOG, "ab") as log:
        proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
                                cwd=repo)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise GitiveError(f"the anchor exited at once (code {proc.returncode}); see {home / LOG}")
        if holder(home) == proc.pid:
            return proc.pid
        time.sleep(0.05)
    raise GitiveError(f"the anchor did not start within 20 s; see {home / LOG}")


def stop(timeout: float = 15.0) -> int | None:
    """Stop the anchor (SIGTERM, then wait for its lock); return the pid stopped, or None if none ran."""
    home = gitive_home()
    pid = holder(home)
    if not pid:
        return None
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if holder(home) != pid:
            return pid
        time.sleep(0.05)
    raise GitiveError(f"the anchor (pid {pid}) did not stop within {timeout:g} s")


def status(hive: Hive, limit: int = 50) -> dict[str, Any]:
    """Whether the anchor runs here, its last run and tick, the candidate queue and its sources' problems."""
    path = state.path_for(hive.store.path)
    out: dict[str, Any] = {"running": False, "pid": holder(gitive_home()), "run": None, "queue": [],
                           "problems": [], "cursors": 0, "log": str(gitive_home() / LOG)}
    out["running"] = out["pid"] is not None
    if not path.exists():
        return out
    with state.connect(path) as st:
        out["run"] = state.last_run(st)
        out["queue"] = Queue(st).items(state=None, limit=limit)
        out["queued"] = st.execute("SELECT COUNT(*) FROM queue WHERE state = 'queued'").fetchone()[0]
        out["gate"] = {"held": st.execute("SELECT COUNT(*) FROM gate_items WHERE state = 'held'").fetchone()[0],
                       "waiting": st.execute("SELECT COUNT(*) FROM gate_items WHERE state = 'new'").fetchone()[0],
                       "decided": dict(st.execute("SELECT branch, COUNT(*) FROM gate_decisions WHERE anchor = ? "
                                                  "GROUP BY branch", (hive.me,)).fetchall())}
        out["problems"] = state.problems(st)
        out["cursors"] = st.execute("SELECT COUNT(*) FROM cursors").fetchone()[0]
    out["prepared"] = prepared_work(hive, limit)
    return out


def prepared_work(hive: Hive, limit: int = 20) -> dict[str, Any]:
    """The anchor's prepared work as the index holds it: how many tasks stand at each step, and the newest."""
    from gitive.anchor.prepared import tasks
    from gitive.index import prepared as prepared_reads
    from gitive.index.refresh import fresh_index

    with fresh_index(hive) as (conn, _):
        found, latest = tasks.all_tasks(conn), prepared_reads.latest(conn)
    counts: dict[str, int] = {}
    for step in latest.values():
        counts[step["state"]] = counts.get(step["state"], 0) + 1
    newest = sorted(latest.items(), key=lambda kv: -kv[1]["at"])[:limit]
    return {"counts": counts, "tasks": [
        {"task": task, "state": step["state"], "at": step["at"], "attempt": step.get("attempt"),
         "branch": tasks.branch_name(found[task]) if task in found else None,
         "title": _first_line((found.get(task) or {}).get("brief"))} for task, step in newest]}


def _first_line(text: Any) -> str | None:
    return text.strip().splitlines()[0][:100] if isinstance(text, str) and text.strip() else None
