"""Per-session memory of the hooks: which lessons a session was shown (each at most once) and its files.

One small JSON file per session under ``$GITIVE_HOME/sessions/``, rewritten under a lock (stdlib only). A hook
never waits for that lock past its deadline: a holder that was stopped (or is slow) costs this call its
lessons, never its answer.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from gitive.core.home import gitive_home

# typing costs each hook process about 5 ms to import; with postponed annotations it is needed only by checkers
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

try:  # hashlib would also load OpenSSL's _hashlib, a few ms more for every hook call
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b

if TYPE_CHECKING:
    from gitive.capture.deadline import Deadline

_POLL_S = 0.002
# A healthy holder keeps the lock for milliseconds; one that kept it this long after gitive's code started is
# stopped or stuck. Counted from gitive's start, not from the first try: what the call did before (its event,
# finding the repository) and has left to do (the reply) must fit beside the wait. Counted from the first try
# (250 ms), a call held up by a frozen holder took 300-330 ms on a quiet CI machine; at 200 ms from gitive's
# start, 240-326 ms (the interpreter's start and the reply around the wait).
LOCK_GIVE_UP_S = 0.15
LOCK_MIN_WAIT_S = 0.02  # however late the call got here, a holder finishing its write still gets this long


def _path(harness: str, session: str) -> Path:
    digest = blake2b(f"{harness}\0{session}".encode(), digest_size=12).hexdigest()
    return gitive_home() / "sessions" / f"{harness}-{digest}.json"


def _lock(fd: int, deadline: Deadline | None) -> bool:
    """Take the lock, waiting at most until ``deadline`` and until ``LOCK_GIVE_UP_S`` after gitive's code
    started (but ``LOCK_MIN_WAIT_S`` at least); None: as long as it takes."""
    if deadline is None:
        fcntl.flock(fd, fcntl.LOCK_EX)
        return True
    from gitive.capture.deadline import STARTED

    give_up = max(STARTED + LOCK_GIVE_UP_S, time.monotonic() + LOCK_MIN_WAIT_S)
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            left = min(deadline.left(), give_up - time.monotonic())
            if left <= 0:
                return False
            time.sleep(min(_POLL_S, left))


@contextmanager
def state(harness: str, session: str, deadline: Deadline | None = None) -> Iterator[dict[str, Any] | None]:
    """Yield the session's state for reading and changing; it is saved on exit (atomically).

    Yields None when the lock could not be had before ``deadline``: the caller then changes nothing.
    """
    path = _path(harness, session)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(path.with_suffix(".lock"), "a") as lock:
        if not _lock(lock.fileno(), deadline):
            yield None
            return
        try:
            try:
                data = json.loads(path.read_text())
            except (OSError, ValueError):
                data = {}
            data.setdefault("shown", [])
            data.setdefault("harness", harness)
            data.setdefault("session", session)
            before = json.dumps(data, sort_keys=True)
            yield data
            if json.dumps(data, sort_keys=True) != before:
                tmp = path.with_suffix(f".{os.getpid()}.tmp")
                tmp.write_text(json.dumps(data, sort_keys=True))
                os.replace(tmp, path)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def shown(harness: str, session: str) -> set[str]:
    try:
        return set(json.loads(_path(harness, session).read_text()).get("shown", []))
    except (OSError, ValueError):
        return set()
