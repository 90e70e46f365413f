"""``gitive status``'s self-test: the installed SessionStart hook, called as its harness calls it.

Files being in place says little: a hook can be installed and still carry nothing (no index, a budget spent
before the card was read, a command that no longer starts). So status runs the command the harness would run,
from the harness's own config file, with a synthetic SessionStart payload on stdin, and reports whether the
reply carried the session card and how long the call took. A SessionEnd for the same synthetic session follows
at once, so the daemon never counts it as live.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import subprocess
import time
from pathlib import Path
from typing import Any

from gitive.capture.prepared import CARD_HEAD

SESSION = "gitive-status-self-test"
TIMEOUT_S = 10.0
HARNESSES = ("claude", "codex", "gemini")  # those whose config gitive-hook's SessionStart is read from
_CONFIGS = {"claude": ".claude/settings.json", "codex": ".codex/hooks.json", "gemini": ".gemini/settings.json"}


def installed_command(toplevel: Path, harness: str) -> str | None:
    """The SessionStart command gitive installed for ``harness`` (from the harness's own file), if any."""
    try:
        config = json.loads((toplevel / _CONFIGS[harness]).read_text(encoding="utf-8"))
    except (KeyError, OSError, ValueError):
        return None
    for group in ((config.get("hooks") or {}).get("SessionStart") or []) if isinstance(config, dict) else []:
        for hook in (group.get("hooks") or []) if isinstance(group, dict) else []:
            command = hook.get("command") if isinstance(hook, dict) else None
            if isinstance(command, str) and "gitive-hook" in command and "session-start" in command:
                return command
    return None


def _call(argv: list[str], toplevel: Path, payload: dict[str, Any]) -> tuple[str, float, int]:
    started = time.perf_counter()
    done = subprocess.run(argv, input=json.dumps(payload), capture_output=True, text=True, cwd=toplevel,
                          timeout=TIMEOUT_S, env=os.environ.copy())
    return done.stdout, (time.perf_counter() - started) * 1000, done.returncode


def _context(out: str) -> str:
    """Every string in the hook's JSON reply (or its plain text), joined: where the card would be."""
    try:
        value: Any = json.loads(out)
    except ValueError:
        return out
    texts, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return "\n".join(texts)


def run(toplevel: Path, harness: str) -> dict[str, Any] | None:
    """Call the installed SessionStart hook of ``harness``; None when gitive installed none for it."""
    command = installed_command(toplevel, harness)
    if command is None:
        return None
    argv = shlex.split(command)
    # A session of its own each time: the card goes to a session once, so a second status would see none.
    payload = {"session_id": f"{SESSION}-{os.getpid()}-{time.time_ns()}", "cwd": str(toplevel), "hook_event_name": "SessionStart", "source": "startup"}
    try:
        out, ms, code = _call(argv, toplevel, payload)
    except (OSError, subprocess.SubprocessError) as exc:
        return {"command": command, "carried": False, "ms": None, "problem": f"the hook did not run ({exc})"}
    end = [*argv[:-1], "session-end"] if argv[-1] == "session-start" else None
    if end:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            _call(end, toplevel, {**payload, "hook_event_name": "SessionEnd", "reason": "other"})
    carried = CARD_HEAD in _context(out)
    problem = None if carried else (f"the hook exited {code}" if code else
                                    "the reply carried no card (see `deliveries` for why, or run "
                                    "`gitive index rebuild` if there is no index)")
    return {"command": command, "carried": carried, "ms": round(ms), "problem": problem}
