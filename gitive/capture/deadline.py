"""One time budget per hook call, counted from when gitive's code starts, capped by the harness's timeout
(stdlib only).

Connecting to the daemon, waiting for a prepared answer, the session lock, an index query (when no daemon
prepared the answer) and the acknowledgement all draw on the same budget, so no combination of slow parts can
hold an agent up for longer than it allows. On a busy machine the interpreter alone can take 200 ms before
gitive's first line runs; a budget counted from process start was spent before the work began, and the card
or the message was dropped. So the budget starts here, when this module is imported (the hook imports it
first), and is sized per event from the harness's own timeout (``HARNESS_TIMEOUT_S``, what ``gitive
install`` writes): most of it at session start, where the card matters most.

The harness still kills a hook at its timeout counted from process start, so the end is also capped at
``HARD_CAP_S`` after the process started (``/proc/self/stat`` on Linux): a call never outlives the harness's
patience, whatever the per-event budget. ``GITIVE_HOOK_BUDGET_MS`` replaces the per-event budget (20 to
10,000 ms; the cap still applies).
"""

from __future__ import annotations

import os
import time

STARTED = time.monotonic()  # when gitive's code started running in this process

HARNESS_TIMEOUT_S = 5.0  # the ``timeout`` gitive writes for every hook it installs
HARD_CAP_S = HARNESS_TIMEOUT_S - 0.75  # from process start: the reply is out well before the harness gives up
BUDGETS_MS = {"session-start": 3500, "prompt": 1500, "post-tool": 1000, "post-tool-failure": 1000,
              "stop": 500, "session-end": 500}
DEFAULT_MS = 1000  # an event without its own budget (and the git hooks)
LIMITS_MS = (20, 10_000)  # what GITIVE_HOOK_BUDGET_MS may ask for
RESERVE_S = 0.015  # kept back for writing the reply, acknowledging it and exiting
EXIT_S = 0.005  # of which exiting takes at most this
FLOOR_S = 0.05  # what a call gets from now at the least, however late the interpreter handed over
_CLOCK = getattr(time, "CLOCK_BOOTTIME", None)


def budget_s(event: str | None = None) -> float:
    """The budget in seconds for ``event``: ``GITIVE_HOOK_BUDGET_MS`` when set (a malformed value is ignored),
    else the event's own."""
    raw = os.environ.get("GITIVE_HOOK_BUDGET_MS", "")
    try:
        ms = int(raw) if raw else None
    except ValueError:
        ms = None
    if ms is None:
        return BUDGETS_MS.get(event or "", DEFAULT_MS) / 1000
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
        return min(max(time.clock_gettime(_CLOCK) - started, 0.0), 60.0)
    except (OSError, ValueError, IndexError):
        return 0.0


class Deadline:
    """When this hook call must be done; :meth:`left` is what any wait may still use.

    ``budget`` (seconds) counts from ``start`` (default: when gitive's code started); ``age`` is how long
    the process had already run at :data:`STARTED` (default: read from ``/proc``), for the hard cap.
    """

    __slots__ = ("end",)

    def __init__(self, budget: float | None = None, age: float | None = None, event: str | None = None,
                 start: float | None = None) -> None:
        now = time.monotonic()
        begun = STARTED if start is None else start
        spent = (process_age_s() - (now - begun)) if age is None else age  # process age when gitive began
        cap = begun - max(spent, 0.0) + HARD_CAP_S
        end = min(begun + (budget_s(event) if budget is None else budget), cap)
        self.end = max(end, min(now + FLOOR_S, cap + 0.5))

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

    def spent_ms(self) -> int:
        """Milliseconds since gitive's code started in this process (for what a miss reports)."""
        return int((time.monotonic() - STARTED) * 1000)
