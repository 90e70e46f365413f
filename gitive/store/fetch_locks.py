"""Ref locks that a killed ``git fetch`` left under ``refs/hive-remotes/`` (issue 23, seen item 9).

``git fetch`` takes ``<ref>.lock`` for every remote-tracking ref it updates and renames it into place. Killed
in between (``kill -9``, an OOM kill, a laptop's sleep, a closed terminal), it leaves the lock behind, and
every later fetch of that ref fails with "File exists" until someone deletes it by hand. git cannot tell a
dead fetch's lock from a live one's; this module can, on this machine: a lock is live only while some
process runs git in this repository (its working directory is the git dir or the work tree) with a command
that updates refs (fetch, pull, remote update). No such process, and the lock is stale: it is removed, the
removal is logged under ``<git dir>/gitive/ref-locks.log``, and the fetch is tried again.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import NamedTuple

from gitive.constants import REMOTES_REF_PREFIX
from gitive.store.refs import log_removed

_UPDATERS = (b"fetch", b"pull", b"remote", b"fetch-pack", b"remote-https", b"remote-http", b"receive-pack")


class Lock(NamedTuple):
    path: Path
    inode: int


def locks(gitdir: Path, remote: str) -> list[Lock]:
    """Every lock file under ``refs/hive-remotes/<remote>/`` (and ``packed-refs.lock``, which a fetch that
    prunes takes too)."""
    found = []
    base = gitdir / f"{REMOTES_REF_PREFIX}{remote}"
    for folder, _, files in os.walk(base):
        found += [Path(folder) / name for name in files if name.endswith(".lock")]
    packed = gitdir / "packed-refs.lock"
    if packed.exists():
        found.append(packed)
    out = []
    for path in found:
        with contextlib.suppress(FileNotFoundError):
            out.append(Lock(path, path.stat().st_ino))
    return out


def _cmdline(pid: str) -> list[bytes]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return []


def _cwd(pid: str) -> Path | None:
    try:
        return Path(os.readlink(f"/proc/{pid}/cwd"))
    except OSError:
        return None


def live_updaters(gitdir: Path, worktree: Path | None) -> list[int]:
    """Pids of git processes that may update refs in this repository (their lock is not ours to take).

    A process whose working directory cannot be read (another user's) counts as live when it runs git: a
    lock is never taken from a process this machine cannot see into.
    """
    roots = [gitdir.resolve()] + ([worktree.resolve()] if worktree is not None else [])
    me = os.getpid()
    out = []
    for pid in (p for p in os.listdir("/proc") if p.isdigit() and int(p) != me):
        argv = _cmdline(pid)
        if not argv or b"git" not in os.path.basename(argv[0]) or not any(a in _UPDATERS for a in argv[1:4]):
            continue
        cwd = _cwd(pid)
        if cwd is None or any(cwd == r or r in cwd.parents for r in roots):
            out.append(int(pid))
    return out


def clear_stale(gitdir: Path, worktree: Path | None, remote: str) -> tuple[list[Path], list[int]]:
    """Remove the locks under ``remote``'s tracking refs if no live git process may hold them.

    Returns:
        (locks removed, pids of live git processes that may hold them; then nothing was removed).
    """
    found = locks(gitdir, remote)
    if not found:
        return [], []
    live = live_updaters(gitdir, worktree)  # listed after the locks: a fetch that made one is running now
    if live:
        return [], live
    removed = []
    for lock in found:
        with contextlib.suppress(OSError):
            if lock.path.stat().st_ino == lock.inode:  # the same file we saw, not a new fetch's
                lock.path.unlink()
                removed.append(lock.path)
    _log(gitdir, removed)
    return removed, []


def _log(gitdir: Path, removed: list[Path]) -> None:
    log_removed(gitdir, [f"{path.relative_to(gitdir)}: left by a git fetch that died" for path in removed])
