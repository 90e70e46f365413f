"""A CPU load like a developer's machine during a build: busy processes, started and stopped by the test.

A developer's machine is rarely idle while agents work: a build or a test run keeps every core busy. Tests of
the hot path and the hook and MCP benchmarks run under this load too. Each busy process is bounded in time on
its own (it stops by itself at its deadline even if the test that started it is killed), and runs in a process
group of its own so stopping it never touches the test.

    with cpu_load(per_core=2, seconds=600) as load:
        ...  # 2 busy processes per core until the block ends (or 600 s pass)
        load.count  # how many

``GITIVE_TEST_LOAD=0`` in the environment makes :func:`cpu_load` start nothing (for a quick local loop); the
suite's default is the load.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field

# Pure Python arithmetic in a loop that checks its own deadline: no I/O, no memory growth.
_BUSY = ("import time\n"
         "end = time.monotonic() + {seconds}\n"
         "x = 0\n"
         "while time.monotonic() < end:\n"
         "    for i in range(20000):\n"
         "        x = (x * 31 + i) % 1000003\n")


@dataclass
class Load:
    """The busy processes of one :func:`cpu_load` block."""

    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.procs)

    def alive(self) -> int:
        return sum(p.poll() is None for p in self.procs)

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                with suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGKILL)
        for p in self.procs:
            p.wait()


def cores() -> int:
    """The cores this process may run on (its affinity, not the machine's count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def enabled() -> bool:
    return os.environ.get("GITIVE_TEST_LOAD", "1") != "0"


@contextmanager
def cpu_load(per_core: int = 2, seconds: float = 600.0, *, settle: float = 0.3) -> Iterator[Load]:
    """Run ``per_core`` busy processes per core for the block (each stops by itself after ``seconds``).

    Args:
        per_core: busy processes per core; 2 is a developer's machine during a build.
        seconds: an upper bound on each process's life, so a killed test leaves no load behind for long.
        settle: seconds to wait after starting, so the scheduler is already shared when the block begins.
    """
    load = Load()
    if enabled():
        code = _BUSY.format(seconds=float(seconds))
        for _ in range(per_core * cores()):
            load.procs.append(subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.DEVNULL,
                                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                               start_new_session=True))
        time.sleep(settle)
    try:
        yield load
    finally:
        load.stop()


def bare_python_ms(runs: int = 5) -> list[float]:
    """Wall times of ``python -c pass`` in milliseconds: the same-run baseline a hook's cost is judged against."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        times.append((time.perf_counter() - start) * 1000)
    return times
