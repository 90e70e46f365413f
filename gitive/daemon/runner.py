"""Running the daemon: one per ``$GITIVE_HOME`` (a lock), a socket, a file watcher and the timers.

Presence is refreshed when the event log changes (and every few seconds); sync runs on an interval (30 s by
default) and soon after this machine writes to its own hive refs. While a local session is live, the remotes'
mail refs are probed every 2 s (``git ls-remote``, no objects) and a sync runs as soon as one moved, so a
message arrives in seconds; with no live session only the interval applies. State lives in SQLite and git, so a daemon
killed at any point restarts with nothing lost: undelivered items are still queued, in-flight ones reappear.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any, TextIO

from gitive.capture import events
from gitive.core import pidlock
from gitive.core.clock import now_ms
from gitive.core.home import ensure_home
from gitive.daemon.server import Server
from gitive.daemon.service import PROBE_EVERY_S, Service
from gitive.errors import GitiveError
from gitive.learn import schedule

LOCK = "daemon.lock"
SOCKET = "daemon.sock"
PRESENCE_EVERY_S = 5.0
LOCAL_CHANGE_SYNC_S = 1.0


class AlreadyRunning(GitiveError):
    pass


def acquire_lock(home: Path) -> TextIO:
    """Hold ``daemon.lock`` for this process's lifetime.

    Raises:
        AlreadyRunning: another daemon serves this ``$GITIVE_HOME``.
    """
    try:
        return pidlock.acquire(home / LOCK)
    except pidlock.Held as held:
        raise AlreadyRunning(f"a gitive daemon already runs for {home} (pid {held.pid}); "
                             "`gitive daemon stop` stops it") from None


def _watch(paths: list[Path], stop: threading.Event, wake: threading.Event, flags: dict[str, Any]) -> None:
    import watchfiles

    def interesting(change: Any, path: str) -> bool:
        # Git writes refs through *.lock files and pack-refs deletes loose refs: re-read tips on any batch.
        return not path.endswith(".lock") and "/objects/" not in path

    try:
        for batch in watchfiles.watch(*[p for p in paths if p.exists()], watch_filter=interesting, debounce=50,
                                      step=10, stop_event=stop, raise_interrupt=False):
            for _, path in batch:
                # Only this machine's own writes call for a push; fetched and pinned refs do not.
                own = any(part in path for part in ("/refs/hive/logs/", "/refs/hive/bodies/", "/refs/hive/presence/"))
                if own:  # remember which store: only that team needs a sync
                    stores = [str(p.parent) for p in paths if path.startswith(str(p) + os.sep)]
                    flags.setdefault("refs", set()).update(stores or ["*"])
                elif "/refs/" not in path and not path.endswith("packed-refs"):
                    flags["events"] = True
            wake.set()
    except Exception:  # the watcher is an accelerator: timers still drive everything without it
        return


def _beat(stop: threading.Event) -> None:
    """The heartbeat hooks read: while it is fresh they trust the prepared cards and ask for rankings."""
    from gitive.capture import spool

    while not stop.is_set():
        with contextlib.suppress(OSError):
            spool.beat()
        stop.wait(spool.HEARTBEAT_S)
    spool.stop_beating()


def run(interval: float = 30.0, repo: str | None = None) -> int:
    home = ensure_home()
    lock = acquire_lock(home)
    service = Service(interval)
    if repo:
        service.add_repo(repo)
    service.discover(now_ms() - 24 * 3_600_000)
    server = Server(home / SOCKET, service)
    serving = threading.Thread(target=server.serve_forever, name="gitive-socket", daemon=True)
    serving.start()
    stop, wake = threading.Event(), threading.Event()
    flags: dict[str, Any] = {}
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda *_: (stop.set(), wake.set()))
    beating = _start_watching(service, stop, wake, flags)
    try:
        _loop(service, interval, stop, wake, flags)
    finally:
        stop.set()
        beating.join(timeout=2)
        server.shutdown()
        server.server_close()
        (home / SOCKET).unlink(missing_ok=True)
        lock.seek(0)
        lock.truncate()  # no stale pid for `gitive daemon stop` to signal later
        lock.close()
    return 0


def _start_watching(service: Service, stop: threading.Event, wake: threading.Event,
                    flags: dict[str, Any]) -> threading.Thread:
    """Watch the event logs and every store's refs, prepare the hooks' answers, and start the heartbeat
    (returned, to be joined at exit)."""
    events.events_dir().mkdir(parents=True, exist_ok=True)
    repos = service.repo_hives().values()
    watched = [events.events_dir(), *dict.fromkeys([*[Path(h.store.path).resolve() / "refs" for h in repos],
                                                    *[h.common_dir.resolve() / "refs" for h in repos]])]
    watcher = threading.Thread(target=_watch, args=(watched, stop, wake, flags), name="gitive-watch", daemon=True)
    watcher.start()
    service.prepare_repos()  # the cards and file matches before the first hook asks
    beating = threading.Thread(target=_beat, args=(stop,), name="gitive-heartbeat", daemon=True)
    beating.start()
    return beating


def _loop(service: Service, interval: float, stop: threading.Event, wake: threading.Event,
          flags: dict[str, Any]) -> None:
    """Until stopped: presence and discovery, a sync after local writes or when due, probes for live sessions."""
    last_presence, last_discover, last_probe = 0.0, now_ms(), 0.0
    last_learn = time.monotonic() - schedule.EVERY_S + 60  # the first quiet pass a minute after start
    while not stop.is_set():
        now = time.monotonic()
        last_learn = schedule.tick(last_learn)
        if flags.pop("events", False) or now - last_presence >= PRESENCE_EVERY_S:
            service.discover(last_discover - 60_000)
            last_discover = now_ms()
            service.refresh_presence()
            last_presence = now
        if changed := flags.pop("refs", None):
            time.sleep(LOCAL_CHANGE_SYNC_S)  # let a burst of local writes finish, then push them
            changed |= flags.pop("refs", set())
            stores = None if "*" in changed else {str(Path(c).resolve()) for c in changed}
            service.sync(only_due=False, stores=stores)
            last_probe = time.monotonic()  # that sync fetched too
        elif service.sync_due():
            service.sync()
            last_probe = time.monotonic()
        elif service.live_sessions and now - last_probe >= PROBE_EVERY_S:
            last_probe = now
            moved = service.probe()
            if moved:
                service.sync(only_due=False, stores=set(moved))
        pause = min(PRESENCE_EVERY_S, interval)
        if service.live_sessions:
            pause = max(0.05, min(pause, last_probe + PROBE_EVERY_S - time.monotonic()))
        wake.wait(timeout=pause)
        wake.clear()
