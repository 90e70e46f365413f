"""Noticing that the team's state moved, for live pages: the index file and the hive ref tips, polled.

A sync or the daemon writes the index (its file or WAL changes) and moves refs (a fetch moves teammates'
presence and logs; this machine's daemon moves its own presence ref). Every ``EVERY_S`` one worker thread takes
a fingerprint of both: two ``stat`` calls and one ref listing per store, nothing read from the objects. When it
differs, the version number goes up and every open event stream is told which part moved.
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path
from typing import Any

import anyio.to_thread

from gitive.store import refs
from gitive.team.hive import open_hive

EVERY_S = 0.5


def fingerprint(repo: Path) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """(index files' size and mtime, every hive ref tip of every store) for the hive of ``repo``."""
    hive = open_hive(repo)
    files = []
    for path in (hive.index_path, hive.index_path.with_name(hive.index_path.name + "-wal")):
        try:
            st = path.stat()
        except FileNotFoundError:
            st = None
        # A reader opening the index creates an empty WAL: that is no change; a writer's WAL is never empty.
        files.append((st.st_size, st.st_mtime_ns) if st and st.st_size else None)
    tips = tuple(sorted(item for store in hive.stores() for item in refs.tips(store, "refs/hive").items()))
    return tuple(files), tips


class Changes:
    def __init__(self, repo: Path, every: float = EVERY_S) -> None:
        self.repo, self.every = repo, every
        self.version = 0
        self.moved: list[str] = []
        self._cond: asyncio.Condition | None = None
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._cond = asyncio.Condition()
        self._task = asyncio.create_task(self._poll())

    async def stop(self) -> None:
        if self._task:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _poll(self) -> None:
        last = await anyio.to_thread.run_sync(fingerprint, self.repo)
        while True:
            await asyncio.sleep(self.every)
            try:
                now = await anyio.to_thread.run_sync(fingerprint, self.repo)
            except Exception:  # a store mid-rewrite (gc, rebuild): look again next time
                continue
            if now != last:
                self.moved = [name for name, a, b in (("index", last[0], now[0]), ("refs", last[1], now[1]))
                              if a != b]
                last = now
                assert self._cond is not None
                async with self._cond:
                    self.version += 1
                    self._cond.notify_all()

    async def wait(self, seen: int, timeout: float) -> int:
        """The version once it differs from ``seen``, or ``seen`` again after ``timeout`` seconds."""
        assert self._cond is not None
        async with self._cond:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._cond.wait_for(lambda: self.version != seen), timeout)
            return self.version
