"""Running watchers: a command's JSON lines become events, and whatever goes wrong is the watcher's problem.

Each stdout line that is a JSON object with an ``action`` (``[a-z0-9_.-]``, at most 64) becomes the event
``watch.<name>.<action>``, its whole object under ``watch.data``, marked ``source.kind = watcher`` and never
trusted as a person. A line that is not such an object, a command that hangs past its timeout (its whole process
group is killed) or exits non-zero is reported as the watcher's problem, and the tick goes on.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
from typing import Any, NamedTuple

from gitive.anchor.base.configuration import Watcher
from gitive.anchor.obligations import events

MAX_OUTPUT = 1 << 20  # bytes of stdout read from one run
MAX_LINES = 1_000
_ACTION = re.compile(r"[a-z0-9_.-]{1,64}")


class Run(NamedTuple):
    events: list[dict[str, Any]]
    problem: str | None


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def parse(name: str, text: str, ts: int) -> tuple[list[dict[str, Any]], list[str]]:
    """Events from a watcher's output, and what was wrong with the lines that are not events."""
    found, bad = [], []
    for number, line in enumerate(text.splitlines()[:MAX_LINES], 1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except ValueError:
            data = None
        action = data.get("action") if isinstance(data, dict) else None
        if not isinstance(action, str) or not _ACTION.fullmatch(action):
            bad.append(f"line {number} is not a JSON object with an action")
            continue
        found.append(events.from_watcher(name, action, data, ts, number))
    return found, bad


def run(watcher: Watcher, cwd: str, ts: int) -> Run:
    """Run ``watcher`` once, in ``cwd``; never raises for anything the command does."""
    try:
        proc = subprocess.Popen(list(watcher.command), cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        return Run([], f"cannot start {watcher.command[0]!r}: {exc.strerror or exc}")
    try:
        out, err = proc.communicate(timeout=watcher.timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        return Run([], f"did not finish within {watcher.timeout:g} s and was stopped")
    found, bad = parse(watcher.name, out[:MAX_OUTPUT].decode("utf-8", "replace"), ts)
    problems = []
    if proc.returncode != 0:
        last = next((ln.strip() for ln in reversed(err.decode("utf-8", "replace").splitlines()) if ln.strip()), "")
        problems.append(f"exited with code {proc.returncode}" + (f": {last[:200]}" if last else ""))
    if bad:
        problems.append(f"{len(bad)} line(s) ignored ({bad[0]})")
    return Run(found, "; ".join(problems) or None)
