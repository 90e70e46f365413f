"""One time budget per hook call, counted from the moment the harness started the process (stdlib only).

Connecting to the daemon, sending, reading its reply, waiting for the session lock, the index query and the
acknowledgement all draw on the same budget, so no combination of slow parts can hold an agent up for longer
than ``GITIVE_HOOK_BUDGET_MS`` (default 150 ms). The interpreter's own start-up counts too: on Linux the
budget starts at the process's start time (``/proc/self/stat``), elsewhere when this module is imported.
A call whose interpreter started so slowly (a machine loaded past its cores) that little or nothing is left
still gets ``FLOOR_S`` from when its own code begins: enough to ask a healthy daemon, never enough for a
stuck one to matter.
"""

from __future__ import annotations

import os
import time

DEFAULT_MS = 150
LIMITS_MS = (20, 10_000)  # what GITIVE_HOOK_BUDGET_MS may ask for
RESERVE_S = 0.015  # kept back for writing the reply, acknowledging it and exiting
EXIT_S = 0.005  # of which exiting takes at most this
FLOOR_S = 0.05  # what a call gets from its own start, however late the interpreter handed over
_CLOCK = getattr(time, "CLOCK_BOOTTIME", None)


def budget_s() -> float:
    """The configured budget in seconds; a malformed value falls back to the default."""
    raw = os.environ.get("GITIVE_HOOK_BUDGET_MS", "")
    try:
        ms = int(raw) if raw else DEFAULT_MS
    except ValueError:
        ms = DEFAULT_MS
    return min(max(ms, LIMITS_MS[0]), LIMITS_MS[1]) / 1000


def process_age_s() -> float:
    """Seconds since this process started, 0 where that cannot be read (tick resolution: 10 ms, rounded up)."""
    if _CLOCK is None:
        return 0.0
    try:
        with open("/proc/self/stat", "rb") as fh:
            stat = fh.read()
        # The command name may hold spaces and parentheses: fields are counted after its closing one.
        started = int(stat[stat.rindex(b")") + 2:].split()[19]) / os.sysconf("SC_CLK_TCK")
        return min(max(time.clock_gettime(_CLOCK) - started, 0.0), 5.0)
    except (OSError, ValueError, IndexError):
        return 0.0


class Deadline:
    """When this hook call must be done; :meth:`left` is what any wait may still use."""

    __slots__ = ("end",)

    def __init__(self, budget: float | None = None, age: float | None = None) -> None:
        spent = process_age_s() if age is None else age
        now = time.monotonic()
        self.end = max(now - spent + (budget_s() if budget is None else budget), now + FLOOR_S)

    def left(self) -> float:
        """Seconds still available to waits, with the reserve for replying already taken off."""
        return self.end - RESERVE_S - time.monotonic()

    def expired(self) -> bool:
        return self.left() <= 0

    def wall_ms(self) -> int:
        """When waits must end, as wall-clock milliseconds (for another process on this machine)."""
        return time.time_ns() // 1_000_000 + int(self.left() * 1000)

    def final(self) -> float:
        """Seconds the acknowledgement may take once the reply is written (the reserve, less the exit)."""
        return self.end - EXIT_S - time.monotonic()
