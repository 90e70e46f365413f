"""Run one real harness session against the scripted model, as a user would start it, and keep what it sent.

:func:`session` starts the harness's headless mode (``claude -p``, ``codex exec``, ``gemini -p``) in a real
repository with its own ``HOME`` (so no setting of the machine's user reaches it), ``GITIVE_HOME`` set to the
machine's, ``gitive`` and ``gitive-hook`` on ``PATH`` (the test's own install, as ``gitive install`` expects),
and the model at the scripted server. The hooks and ``gitive mcp`` it starts inherit all of that. Where the
machine allows it the harness runs in a network namespace of its own with only loopback
(:mod:`testing.harness.netns`); elsewhere the model server is reached directly and every harness's own
switches for telemetry, updates and other traffic are off.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path

from testing.harness import install, netns
from testing.harness.protocols import View, view
from testing.harness.server import ModelServer, Request

# Variables passed through from the test's own environment: hermetic git and a few basics.
_PASSED = ("LANG", "LC_ALL", "TZ", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_TEMPLATE_DIR", "GIT_AUTHOR_NAME",
           "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_TERMINAL_PROMPT",
           "GIT_MERGE_AUTOEDIT", "GIT_PROTOCOL_FROM_USER")
BIN = Path(sys.executable).parent  # where this install's `gitive` and `gitive-hook` are
# The hook budget the rig's sessions run with: generous, so the rig's claims are about what the harness does
# with gitive's context and not about the budget; the sessions that check the product's own default budget
# pass ``budget=None`` (tests/harness/test_default_budget.py).
GENEROUS_BUDGET_MS = "3000"


@dataclass
class Run:
    """One finished harness process and the requests its model received."""

    harness: str
    code: int
    out: str
    err: str
    seconds: float
    requests: list[Request] = field(default_factory=list)
    sandboxed: bool = False

    def turns(self) -> list[Request]:
        return [r for r in self.requests if r.kind == "turn"]

    def agent_turns(self) -> list[Request]:
        """The agent loop's own requests (those that offer tools), in order."""
        return [r for r in self.turns() if view(r).tools]

    def views(self) -> list[View]:
        return [view(r) for r in self.agent_turns()]

    def __str__(self) -> str:  # what pytest shows when an assertion about a run fails
        paths = ", ".join(f"{r.method} {r.path} {r.status}" for r in self.requests)
        return (f"{self.harness} exited {self.code} after {self.seconds:.1f} s (sandboxed: {self.sandboxed}); "
                f"requests: {paths or 'none'}\n--- stdout\n{self.out[-4000:]}\n--- stderr\n{self.err[-4000:]}")


def base_env(home: Path, gitive_home: Path | None, extra: Mapping[str, str] | None = None,
             budget: str | None = GENEROUS_BUDGET_MS) -> dict[str, str]:
    """What every harness gets: its own HOME, the machine's GITIVE_HOME, this install's commands on PATH, and
    the hook budget (None: the product's default)."""
    node = shutil.which("node")
    dirs = [str(BIN), *([str(Path(node).parent)] if node else []), "/usr/local/bin", "/usr/bin", "/bin"]
    env = {k: os.environ[k] for k in _PASSED if k in os.environ}
    env.update({"HOME": str(home), "PATH": os.pathsep.join(dict.fromkeys(dirs)), "TERM": "dumb", "NO_COLOR": "1",
                "TMPDIR": str(home / "tmp"), "USER": os.environ.get("USER", "gitive"), "SHELL": "/bin/bash"})
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    if gitive_home is not None:
        env["GITIVE_HOME"] = str(gitive_home)
    if budget is not None:
        env["GITIVE_HOOK_BUDGET_MS"] = budget
    env.update(extra or {})
    return env


def execute(harness: str, command: list[str], cwd: Path, env: Mapping[str, str], model: ModelServer,
            timeout: float, stdin: str = "") -> Run:
    """Run ``command`` (inside a loopback-only namespace when possible); the requests are those that arrived
    while it ran."""
    sandboxed = netns.available()
    argv = netns.wrap(command, model.port, model.unix_path) if sandboxed else command
    first = len(model.requests)
    started = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=dict(env), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = proc.communicate(stdin.encode(), timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill(proc)
        out, err = proc.communicate()
        err += f"\n[test rig: killed after {timeout:g} s]".encode()
    seconds = time.perf_counter() - started
    _kill(proc)  # a background child the harness left behind (an MCP server, a hook) goes with it
    return Run(harness, proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), seconds,
               list(model.requests[first:]), sandboxed)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=10)


def binary(name: str) -> str:
    return str(install.ensure(name))
