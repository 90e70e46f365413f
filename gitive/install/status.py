"""``gitive status``: what is installed in this repository and whether each part can work."""

from __future__ import annotations

import contextlib
import shutil
import socket
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

from gitive.capture import deliveries
from gitive.capture.githooks import FAILURE_LOG
from gitive.core.home import gitive_home
from gitive.errors import GitiveError
from gitive.install import codex, gemini, git_hooks, selftest
from gitive.install import state as st
from gitive.install.installer import HARNESSES
from gitive.install.repo import Location, locate

DAEMON_SOCKET = "daemon.sock"
_PROBE = "import gitive.capture.githooks"


def status(path: Path | str | None = None) -> dict[str, Any]:
    """The installation report for the repository at ``path`` (see ``docs/install.md`` for the fields).

    Raises:
        NotARepository: ``path`` is not in a git work tree.
    """
    loc = locate(path)
    try:
        recorded: dict[str, Any] = st.load(loc.git_dir)
        state_problem = None
    except GitiveError as exc:
        recorded, state_problem = {"files": {}}, str(exc)
    commands = {name: shutil.which(name) for name in ("gitive-hook", "gitive")}
    return {
        "repository": str(loc.toplevel),
        "state": {"path": str(st.state_path(loc.git_dir)), "problem": state_problem},
        "commands": commands,
        "harnesses": {name: _harness(loc, name, recorded, commands) for name in HARNESSES},
        "git_hooks": _git_hooks(loc, recorded.get("git_hooks") or {}, commands["gitive-hook"]),
        "index": _index(loc),
        "remotes": _remotes(loc),
        "daemon": _daemon(),
        "deliveries": deliveries.summary(),  # the hot path's own record (gitive/capture/deliveries.py)
        "self_test": {name: found for name in HARNESSES if name in selftest.HARNESSES
                      and (found := selftest.run(loc.toplevel, name)) is not None},
    }


def _harness(loc: Location, name: str, recorded: dict[str, Any], commands: dict[str, str | None]
             ) -> dict[str, Any]:
    parts: dict[str, Any] = {}
    for target in HARNESSES[name].targets():
        installed = target.present(st.read_bytes(loc.toplevel / target.path))
        for part in target.holds:
            needs = "gitive-hook" if part == "hooks" else "gitive"
            problem = f"`{needs}` is not on PATH, so {name} cannot start it" \
                if installed and commands[needs] is None else None
            parts[part] = {"path": target.path, "installed": installed, "works": installed and problem is None,
                           "recorded": target.path in recorded["files"], "problem": problem,
                           "warning": _warning(loc, name, part) if installed else None}
    return parts


def _warning(loc: Location, name: str, part: str) -> str | None:
    """What may still stop an installed part from running that gitive cannot fix (Codex's review of its
    hooks, Gemini's trusted folder); None when nothing does, as far as gitive can check."""
    if name == "gemini" and part == "hooks":
        trusted = gemini.folder_trusted(loc.toplevel)
        return None if trusted else gemini.TRUST_STEP + (
            " (this folder is not in Gemini's trustedFolders.json yet)" if trusted is False else "")
    if name != "codex" or part != "hooks":
        return None
    trusted = codex.project_trusted(loc.toplevel)
    where = {True: "", False: " (this project is not marked trusted in Codex's config.toml yet)",
             None: ""}[trusted]
    return codex.TRUST_STEP + where


def _runner(python: str | None, hook_command: str | None) -> tuple[str | None, str | None]:
    """What the git hooks will run (the recorded interpreter, else ``gitive-hook``) and any problem."""
    if python:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            if subprocess.run([python, "-c", _PROBE], capture_output=True, timeout=20).returncode == 0:
                return python, None
    if hook_command:
        return hook_command, None
    return None, (f"neither {python or 'the recorded interpreter'} (with gitive) nor `gitive-hook` on PATH "
                  "can run: commits are not recorded; run `gitive install --git-hooks` again")


def _git_hooks(loc: Location, recorded: dict[str, Any], hook_command: str | None) -> dict[str, Any]:
    hooks = git_hooks.inspect(loc)
    runner, problem = _runner(recorded.get("python"), hook_command)
    for info in hooks.values():
        info["installed"] = info["path"] is not None
        info["works"] = info["installed"] and info["executable"] and runner is not None
    return {"dir": str(loc.hooks_dir), "hooks": hooks, "runner": runner, "problem": problem,
            "last_failure": _last_failure()}


def _last_failure() -> str | None:
    try:
        lines = (gitive_home() / "logs" / FAILURE_LOG).read_text().splitlines()
    except OSError:
        return None
    return lines[-1] if lines else None


def _index(loc: Location) -> dict[str, Any]:
    from gitive.team.hive import open_hive

    try:
        path = open_hive(loc.toplevel).index_path
    except GitiveError as exc:
        return {"path": None, "exists": False, "readable": False, "problem": str(exc)}
    out: dict[str, Any] = {"path": str(path), "exists": path.exists(), "readable": False, "problem": None}
    if not path.exists():
        out["problem"] = "no index yet: `gitive index rebuild` (or any command that reads the hive) builds it"
        return out
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        finally:
            conn.close()
        out["readable"] = True
    except sqlite3.Error as exc:
        out["problem"] = f"unreadable: {exc}; `gitive index rebuild` rebuilds it from the refs"
    return out


def _remotes(loc: Location) -> list[dict[str, Any]] | None:
    """The remotes ``gitive sync`` uses here and leaves out (the very decision it makes); None without a team."""
    from gitive.index.doctor import remote_plans
    from gitive.team.hive import open_hive

    try:
        return remote_plans(open_hive(loc.toplevel))
    except GitiveError:
        return None


def _daemon() -> dict[str, Any]:
    path = gitive_home() / DAEMON_SOCKET
    if not path.exists():
        return {"socket": str(path), "running": False, "problem": None}
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.2)
        try:
            sock.connect(str(path))
        except OSError as exc:
            return {"socket": str(path), "running": False, "problem": f"stale socket ({exc})"}
    return {"socket": str(path), "running": True, "problem": None}
