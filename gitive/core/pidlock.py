"""A lock file one long-lived process (the daemon, the anchor) holds for its whole life, naming its pid.

The pid is only believed while the lock is held: a dead process's pid, left in the file, proves nothing (the
number may belong to another process by now).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import TextIO


class Held(Exception):
    """Another process holds the lock; ``pid`` is what it wrote (``"unknown"`` if nothing yet)."""

    def __init__(self, pid: str) -> None:
        super().__init__(pid)
        self.pid = pid


def acquire(path: Path) -> TextIO:
    """Take the lock at ``path`` and write this process's pid in it; keep the returned file open to hold it.

    Raises:
        Held: another process holds it.
    """
    fh = open(path, "a+")  # noqa: SIM115 - held open for the process's whole life
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fh.seek(0)
        pid = fh.read().strip() or "unknown"
        fh.close()
        raise Held(pid) from None
    fh.seek(0)
    fh.truncate()
    fh.write(str(os.getpid()))
    fh.flush()
    return fh


def holder(path: Path) -> int | None:
    """The pid of the process holding the lock at ``path``, or None when nobody holds it."""
    try:
        with open(path) as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                text = fh.read().strip()
                return int(text) if text.isdigit() else None
            fcntl.flock(fh, fcntl.LOCK_UN)
            return None
    except OSError:
        return None
