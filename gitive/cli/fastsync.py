"""The no-op ``gitive sync`` without importing Typer, pygit2 or PyNaCl (stdlib only).

Most syncs find nothing new: the fetch moves no ref, every log tip equals the index's cursor, and the remote
already has every one of this machine's refs. That case is answered here in a few tens of milliseconds.
Anything else (a moved ref, a ref to push, a separate team store, an error, upkeep due) returns None and
the full command runs, which repeats the (now cheap) fetch and does the real work.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

from gitive.capture import locate
from gitive.core.home import gitive_home
from gitive.store.git import no_git_env  # stdlib only: the one place that decides a git child's environment


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(["git", *args], cwd=cwd, env=no_git_env(), capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None


def _hive_tips(git_dir: Path) -> dict[str, str] | None:
    """Tips of every hive ref, read from git's own files (packed-refs, then loose refs, which win).

    Reading them costs well under a millisecond, where ``git for-each-ref`` costs a process start.
    """
    tips: dict[str, str] = {}
    try:
        for line in (git_dir / "packed-refs").read_text().splitlines():
            if line and line[0] not in "#^" and " refs/hive" in line:
                oid, _, name = line.partition(" ")
                tips[name] = oid
    except FileNotFoundError:
        pass
    except OSError:
        return None
    for top in ("hive", "hive-remotes", "hive-pinned"):
        base = git_dir / "refs" / top
        for folder, _, files in os.walk(base):
            for name in files:
                if name.endswith(".lock"):
                    return None  # a writer is busy: let the full command look
                path = Path(folder) / name
                try:
                    oid = path.read_text().strip()
                except OSError:
                    return None
                if oid.startswith("ref:"):
                    return None
                tips["refs/" + str(path.relative_to(git_dir / "refs"))] = oid
    return tips


def _upkeep_due(git_dir: Path) -> bool:
    from gitive.store import maintenance  # stdlib only at import: the same schedule the full sync keeps

    stamp = gitive_home() / "citations-checked"
    try:
        citations_due = time.time() * 1000 - int(stamp.read_text()) >= 3_600_000
    except (OSError, ValueError):
        citations_due = True
    return maintenance.due(git_dir) or citations_due


def try_noop(argv: list[str]) -> int | None:
    """Run a sync that has nothing to do, or return None to let the full command run."""
    if argv not in (["sync"], ["sync", "--json"]):
        return None
    found = locate.find(os.getcwd())
    if found is None:
        return None
    config = locate.read_config_all(found.common_dir)
    if not config.get("hive.team") or config.get("hive.teamstore") or _upkeep_due(found.common_dir):
        return None
    remotes = config.get("hive.remote", [])
    index = found.common_dir / "gitive" / "index.sqlite"
    if not remotes or not index.exists():
        return None
    for remote in remotes:
        done = _git(["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", remote,
                     f"+refs/hive/*:refs/hive-remotes/{remote}/*"], found.toplevel)
        if done is None or done.returncode != 0:
            return None  # the full command reports it properly
    tips = _hive_tips(found.common_dir)
    if tips is None:
        return None
    for name, tip in tips.items():  # our own refs: the remote must already have each of them
        if name.startswith("refs/hive/"):
            for remote in remotes:
                if tips.get(f"refs/hive-remotes/{remote}/{name[len('refs/hive/'):]}") != tip:
                    return None
    try:
        conn = sqlite3.connect(f"file:{quote(str(index))}?mode=ro", uri=True, timeout=1)
        try:
            cursors = dict(conn.execute("SELECT ref, tip FROM cursors WHERE store = ?",
                                        (str(found.common_dir) + "/",)).fetchall())
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    watched = ("/logs/", "/bodies/")
    for name, tip in tips.items():
        if any(part in name for part in watched) and cursors.get(name) != tip:
            return None  # something new to verify and index
    if "--json" in argv:
        report = {"fetched": dict.fromkeys(remotes, 0), "received": 0, "problems": [],
                  "pushed": {r: [] for r in remotes}, "rejected": [], "unreachable": {}, "packed": False,
                  "dropped": 0, "ok": True}
        sys.stdout.write(json.dumps(report, indent=2, sort_keys=True) + "\n")
    else:
        sys.stdout.write(f"fetched 0 changed refs from {len(remotes)} remote(s); received 0 new entries\n")
    return 0
