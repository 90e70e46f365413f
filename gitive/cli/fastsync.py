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
from gitive.store.gitdir import hive_tips
from gitive.store.remotes import choose_from_config


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str] | None:
    try:
        return subprocess.run(["git", *args], cwd=cwd, env=no_git_env(), capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None


def _upkeep_due(git_dir: Path) -> bool:
    from gitive.constants import LOOSE_OBJECTS_PACK_THRESHOLD

    try:
        loose = len(os.listdir(git_dir / "objects" / "17")) * 256
    except OSError:
        loose = 0
    stamp = gitive_home() / "citations-checked"
    try:
        citations_due = time.time() * 1000 - int(stamp.read_text()) >= 3_600_000
    except (OSError, ValueError):
        citations_due = True
    return loose > LOOSE_OBJECTS_PACK_THRESHOLD or citations_due


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
    remotes = choose_from_config(config).chosen
    index = found.common_dir / "gitive" / "index.sqlite"
    if not remotes or not index.exists():
        return None
    for remote in remotes:
        done = _git(["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", remote,
                     f"+refs/hive/*:refs/hive-remotes/{remote}/*"], found.toplevel)
        if done is None or done.returncode != 0:
            return None  # the full command reports it properly
    tips = hive_tips(found.common_dir)
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
