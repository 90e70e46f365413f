"""The one clock: integer milliseconds since the epoch, UTC."""

from __future__ import annotations

import os
import time


def now_ms() -> int:
    # GITIVE_NOW_MS lets tests and the demo stamp records deterministically.
    fixed = os.environ.get("GITIVE_NOW_MS")
    if fixed:
        return int(fixed)
    return time.time_ns() // 1_000_000
