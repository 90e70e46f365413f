"""The daemon's hourly quiet pass: one call per loop turn, the pass itself on a background thread.

The pass only reads the local event log and writes the local draft store, so it never holds up presence,
mail or sync; a failure is swallowed (the next hour tries again), because learning must never stop the daemon.
"""

from __future__ import annotations

import threading
import time

EVERY_S = 3600.0
_running = threading.Lock()


def _pass() -> None:
    from gitive.learn import drafting

    try:
        drafting.run()
    except Exception:  # a broken event line or a busy store: try again next hour
        pass
    finally:
        _running.release()


def tick(last: float, every: float = EVERY_S) -> float:
    """Start the pass when ``every`` seconds passed since ``last`` (monotonic); return when it last started."""
    now = time.monotonic()
    if now - last < every or not _running.acquire(blocking=False):
        return last
    threading.Thread(target=_pass, name="gitive-learn", daemon=True).start()
    return now
