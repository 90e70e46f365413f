"""Starting, stopping and asking the daemon, from commands that are not the daemon."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import Any

from gitive.capture import daemon_client
from gitive.core import pidlock
from gitive.core.home import ensure_home, gitive_home
from gitive.daemon.runner import LOCK, SOCKET
from gitive.errors import GitiveError


def ask(op: str, budget: float = 5.0, **fields: Any) -> dict[str, Any] | None:
    return daemon_client.request({"op": op, **fields}, budget=budget)


def running() -> int | None:
    """The daemon's pid if one answers on the socket."""
    reply = ask("ping", budget=1.0)
    return int(reply["pid"]) if reply and reply.get("ok") else None


def start(interval: float, repo: str | None) -> int:
    """Start the daemon in the background; return its pid once its socket answers.

    Raises:
        GitiveError: one already runs, or the new one did not come up (its log says why).
    """
    pid = running()
    if pid:
        raise GitiveError(f"a gitive daemon already runs for {gitive_home()} (pid {pid})")
    home = ensure_home()
    log = open(home / "daemon.log", "ab")  # noqa: SIM115 - handed to the child
    args = [sys.executable, "-m", "gitive.daemon", "--interval", str(interval)]
    if repo:
        args += ["--repo", repo]
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
                            cwd=repo or os.getcwd())
    log.close()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise GitiveError(f"the daemon exited at once (code {proc.returncode}); see {home / 'daemon.log'}")
        if running():
            return proc.pid
        time.sleep(0.05)
    raise GitiveError(f"the daemon did not answer within 15 s; see {home / 'daemon.log'}")


def stop(timeout: float = 10.0) -> int | None:
    """Stop the daemon (SIGTERM, then wait); return the pid that was stopped, or None if none ran."""
    home = gitive_home()
    pid = running() or pidlock.holder(home / LOCK)
    if not pid:
        return None
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        (home / SOCKET).unlink(missing_ok=True)
        return None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return pid
        time.sleep(0.05)
    raise GitiveError(f"the daemon (pid {pid}) did not stop within {timeout:g} s")


def status() -> dict[str, Any]:
    reply = ask("status", budget=3.0)
    if reply and reply.get("ok"):
        return {"running": True, **reply}
    home = gitive_home()
    stale = (home / SOCKET).exists()
    return {"running": False, "stale_socket": stale, "lock": str(home / LOCK)}
