"""The one clock: integer milliseconds since the epoch, UTC."""

from __future__ import annotations

import os
import time


def now_ms() -> int:
    # GITIVE_NOW_MS lets tests and the demo stamp records deterministically. GITIVE_CLOCK_FILE (for tests) names
    # a file holding the time in ms, so a test moves a running process's clock (the anchor's deadlines) by
    # rewriting it; an unreadable file falls back to the real clock.
    fixed = os.environ.get("GITIVE_NOW_MS")
    if fixed:
        return int(fixed)
    path = os.environ.get("GITIVE_CLOCK_FILE")
    if path:
        try:
            with open(path) as fh:
                return int(fh.read().strip())
        except (OSError, ValueError):
            pass
    return time.time_ns() // 1_000_000
