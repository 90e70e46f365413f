"""The one way gitive runs the git CLI (fetch, push, config, maintenance).

Network operations go through the CLI, not libgit2, so the user's credential helpers, ssh config and
proxies apply exactly as they do for ``git fetch``.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from gitive.errors import GitCommandError

# Hooks run with GIT_DIR, GIT_INDEX_FILE and friends set for the outer repository; a git command we
# start for another repository (a team store, a remote) must not inherit them.
_KEEP = {"GIT_SSH", "GIT_SSH_COMMAND", "GIT_ASKPASS", "GIT_TERMINAL_PROMPT", "GIT_HTTP_USER_AGENT",
         "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_TRACE", "GIT_TRACE_PACKET",
         "GIT_EXEC_PATH", "GIT_TEMPLATE_DIR", "GIT_PROTOCOL_FROM_USER", "GIT_ALLOW_PROTOCOL"}


def no_git_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") or k in _KEEP}
    env.setdefault("GIT_TERMINAL_PROMPT", "0")  # never hang on a password prompt inside a sync
    if extra:
        env.update(extra)
    return env


def run(
    args: Sequence[str],
    cwd: Path | str | None = None,
    *,
    check: bool = True,
    input: bytes | None = None,
    timeout: float | None = None,
) -> tuple[int, str, str]:
    """Run ``git <args>``; return ``(returncode, stdout, stderr)``.

    Raises:
        GitCommandError: the command exited non-zero and ``check`` is true, or git timed out.
    """
    cmd = ("git", *args)
    try:
        proc = subprocess.run(
            cmd, cwd=cwd, env=no_git_env(), input=input, capture_output=True, timeout=timeout,
            stdin=None if input is not None else subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        raise GitCommandError(cmd, -1, "", f"timed out after {exc.timeout:.0f}s") from None
    out = proc.stdout.decode("utf-8", "replace")
    err = proc.stderr.decode("utf-8", "replace")
    if check and proc.returncode != 0:
        raise GitCommandError(cmd, proc.returncode, out, err)
    return proc.returncode, out, err


def zsplit(text: str) -> list[str]:
    return [part for part in text.split("\0") if part]
