"""Per-session memory of the hooks: which lessons a session was shown (each at most once) and its files.

One small JSON file per session under ``$GITIVE_HOME/sessions/``, rewritten under a lock (stdlib only).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gitive.core.home import gitive_home


def _path(harness: str, session: str) -> Path:
    digest = hashlib.blake2b(f"{harness}\0{session}".encode(), digest_size=12).hexdigest()
    return gitive_home() / "sessions" / f"{harness}-{digest}.json"


@contextmanager
def state(harness: str, session: str) -> Iterator[dict[str, Any]]:
    """Yield the session's state for reading and changing; it is saved on exit (atomically)."""
    path = _path(harness, session)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(path.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
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
