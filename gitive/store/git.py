"""The one way gitive runs the git CLI (fetch, push, config, maintenance).

Network operations go through the CLI, not libgit2, so the user's credential helpers, ssh config and
proxies apply exactly as they do for ``git fetch``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from gitive.errors import GitCommandError

# subprocess (with threading, signal and selectors, ~5 ms) loads at the first ``run``: the no-op sync's fetch
# goes through ``output``, which needs only os and select.

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
    import subprocess

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


def output(args: Sequence[str], cwd: Path | str, timeout: float) -> tuple[int, bytes]:
    """The exit status and standard output of ``git -C <cwd> <args>``, its input empty and its errors
    discarded; (-1, b"") when it ran past ``timeout`` seconds (it is killed) or could not start.

    Spawned with ``posix_spawn`` and read through a pipe, without loading ``subprocess``: the no-op sync's probe
    of its remotes, where the interpreter's imports are most of gitive's own cost. Falls back to :func:`run`
    where the platform has no ``posix_spawn``.
    """
    if not hasattr(os, "posix_spawnp"):
        try:
            code, out, _ = run(args, cwd, check=False, timeout=timeout)
        except (GitCommandError, OSError):
            return -1, b""
        return code, out.encode()
    import select
    import time

    end = time.monotonic() + timeout
    read, write = os.pipe()
    devnull = os.open(os.devnull, os.O_RDWR)
    try:
        pid = os.posix_spawnp("git", ["git", "-C", str(cwd), *args], no_git_env(),
                              file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 0), (os.POSIX_SPAWN_DUP2, write, 1),
                                            (os.POSIX_SPAWN_DUP2, devnull, 2)])
    except OSError:
        os.close(read)
        return -1, b""
    finally:
        os.close(devnull)
        os.close(write)
    chunks = []
    try:
        poll = select.poll()
        poll.register(read, select.POLLIN)
        while True:
            left = end - time.monotonic()
            if left <= 0 or not poll.poll(left * 1000):
                os.kill(pid, 9)  # SIGKILL, as subprocess.run does on a timeout
                os.waitpid(pid, 0)
                return -1, b""
            chunk = os.read(read, 65536)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(read)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), b"".join(chunks)


def zsplit(text: str) -> list[str]:
    return [part for part in text.split("\0") if part]
