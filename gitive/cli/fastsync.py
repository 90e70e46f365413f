"""``gitive sync`` without importing Typer, pygit2 or PyNaCl (stdlib only), when that is possible.

A running daemon answers ``gitive sync`` over its socket: it has git, the index and the verifier warm, so the
command costs the interpreter and the daemon's own fetch and push. Without a daemon, a sync that finds
nothing new (every hive ref each remote advertises equals this repository's copy of it, so a fetch would move
no ref; every log tip equals the index's cursor; each remote already has every one of this machine's refs) is
answered here. Anything else (a ref to fetch, a ref to push, a separate team store, an error, upkeep due)
returns None and the full command runs and does the real work.

The remotes are asked with ``git ls-remote`` (``store.remotes.advertised``), about half the cost of a no-op
fetch, spawned without ``subprocess``. Whether the index has read every local log and body tip is asked of the
index once; the answer is kept in ``<git dir>/gitive/noop-sync.stamp`` (a cache, ``v1``, naming the index
file by device, inode, size and change time and the watched tips by count and checksum), so repeated no-op
syncs need neither ``sqlite3`` nor a query: a stamp that does not match exactly (any tip moved, the index
rewritten or rebuilt, another version) is a miss and the index is asked again. Nothing here imports
``typing`` or ``json`` unless ``--json`` asks: on this path the interpreter's imports were most of gitive's own
cost.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from gitive.capture import locate
from gitive.core.home import gitive_home
from gitive.store.gitdir import hive_tips
from gitive.store.remotes import REMOTES_PREFIX, advertised, choose_from_config

WATCHED = ("/logs/", "/bodies/")  # the refs whose tips ingest keeps a cursor for (index.refresh's _WATCHED)
STAMP = Path("gitive") / "noop-sync.stamp"


def _stamp(index: Path, watched: list[tuple[str, str]]) -> str:
    import zlib

    text = "".join(f"{name} {tip}\n" for name, tip in watched).encode()
    st = index.stat()
    return (f"v1 {st.st_dev} {st.st_ino} {st.st_size} {st.st_ctime_ns} {len(watched)} "
            f"{zlib.crc32(text):08x}{zlib.adler32(text):08x}\n")


def _indexed(common_dir: Path, index: Path, watched: list[tuple[str, str]]) -> bool:
    """Whether the index's cursor equals every one of ``watched`` (name, tip): the stamp says so, or the index."""
    stamp = common_dir / STAMP
    try:
        mark: str | None = _stamp(index, watched)
    except OSError:
        mark = None
    try:
        if mark is not None and stamp.read_text() == mark:
            return True
    except OSError:
        pass  # no stamp yet
    import sqlite3
    from urllib.parse import quote

    try:
        conn = sqlite3.connect(f"file:{quote(str(index))}?mode=ro", uri=True, timeout=1)
        try:
            cursors = dict(conn.execute("SELECT ref, tip FROM cursors WHERE store = ?",
                                        (str(common_dir) + "/",)).fetchall())
        finally:
            conn.close()
    except sqlite3.Error:
        return False
    if any(cursors.get(name) != tip for name, tip in watched):
        return False
    if mark is not None:
        try:
            tmp = stamp.with_name(f"{stamp.name}.{os.getpid()}.tmp")
            tmp.write_text(mark)
            os.replace(tmp, stamp)
        except OSError:
            pass  # a read-only git dir: the index answers every time
    return True


def _upkeep_due(git_dir: Path) -> bool:
    from gitive.store import maintenance  # stdlib only at import: the same schedule the full sync keeps

    stamp = gitive_home() / "citations-checked"
    try:
        citations_due = time.time() * 1000 - int(stamp.read_text()) >= 3_600_000
    except (OSError, ValueError):
        citations_due = True
    return maintenance.due(git_dir) or citations_due


def _print(report: dict[str, object], lines: list[list[str]], as_json: bool) -> int:
    if as_json:
        import json

        sys.stdout.write(json.dumps(report, indent=2, sort_keys=True) + "\n")
    else:
        sys.stdout.write("".join(text + "\n" for _, text in lines))
    return 0 if report.get("ok") else 1


def _by_daemon(found: locate.Located, as_json: bool) -> int | None:
    """Let a running daemon do the sync (it has git and the index warm); None when none answers."""
    from gitive.capture import daemon_client

    if not (gitive_home() / daemon_client.SOCKET).exists():
        return None
    reply = daemon_client.request({"op": "sync", "repo": str(found.toplevel)}, budget=600)
    if not reply or not reply.get("ok") or not isinstance(reply.get("report"), dict):
        return None  # an old daemon, or one that failed: the full command runs and reports
    return _print(reply["report"], reply.get("lines") or [], as_json)


def try_noop(argv: list[str]) -> int | None:
    """Run a sync through the daemon, or one that has nothing to do; None lets the full command run."""
    if argv not in (["sync"], ["sync", "--json"]):
        return None
    found = locate.find(os.getcwd())
    if found is None:
        return None
    config = locate.read_config_all(found.common_dir)
    if not config.get("hive.team"):
        return None
    answered = _by_daemon(found, "--json" in argv)
    if answered is not None:
        return answered
    if config.get("hive.teamstore") or _upkeep_due(found.common_dir):
        return None
    remotes = choose_from_config(config).chosen
    index = found.common_dir / "gitive" / "index.sqlite"
    if not remotes or not index.exists():
        return None
    tips = hive_tips(found.common_dir)
    if tips is None:
        return None
    for remote in remotes:
        theirs = advertised(found.toplevel, remote)
        if theirs is None:
            return None  # the full command reports it properly
        copies = f"{REMOTES_PREFIX}{remote}/"
        if any(tips.get(copies + name[len("refs/hive/"):]) != tip for name, tip in theirs.items()):
            return None  # a fetch would bring something: the full command fetches it
        for name, tip in tips.items():  # our own refs: the remote must already have each of them
            if name.startswith("refs/hive/") and theirs.get(name) != tip:
                return None
    watched = sorted((name, tip) for name, tip in tips.items() if any(part in name for part in WATCHED))
    if not _indexed(found.common_dir, index, watched):
        return None  # something new to verify and index
    if "--json" in argv:
        import json

        report = {"fetched": dict.fromkeys(remotes, 0), "received": 0, "problems": [],
                  "pushed": {r: [] for r in remotes}, "rejected": [], "unreachable": {}, "packed": False,
                  "dropped": 0, "no_remote": [], "team": {"id": config["hive.team"][-1]}, "ok": True}
        sys.stdout.write(json.dumps(report, indent=2, sort_keys=True) + "\n")
    else:
        sys.stdout.write(f"fetched 0 changed refs from {len(remotes)} remote(s); received 0 new entries\n")
    return 0
