"""Where the suite spends its CPU: a pytest plugin that records, per test and phase, wall time, this process's
CPU, the CPU of the child processes it reaped, and the programs it started.

    GITIVE_CPU_PROFILE=/tmp/prof python -m pytest -p testing.cpuprofile -q -n 2
    python -m testing.cpuprofile /tmp/prof --top 30       # per test, per file, per program

Each worker appends JSON lines to ``DIR/<worker>.jsonl``: ``{"id", "phase", "wall", "cpu", "child", "spawns"}``
(seconds; ``spawns`` maps a program's name to how many times the test process started it). Children that
outlive their test are charged to the phase that reaps them. The report also prints, per worker, when its
last test ended, so an unbalanced end shows.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import time
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path

import pytest

_SPAWNS: Counter[str] = Counter()
_ORIGINAL_INIT = subprocess.Popen.__init__


def _counting_init(self, args, *rest, **kwargs):  # type: ignore[no-untyped-def]
    first = args if isinstance(args, (str, bytes, os.PathLike)) else (args[0] if args else "")
    name = os.path.basename(os.fsdecode(first)).split()[0] if first else "?"
    _SPAWNS[name] += 1
    _ORIGINAL_INIT(self, args, *rest, **kwargs)


_WHERE: list[Path] = []  # read once at start: a test may change os.environ


def _out() -> Path | None:
    return _WHERE[0] if _WHERE else None


def pytest_configure(config: pytest.Config) -> None:
    where = os.environ.get("GITIVE_CPU_PROFILE")
    if where:
        _WHERE.append(Path(where))
        subprocess.Popen.__init__ = _counting_init  # type: ignore[method-assign]


def _usage() -> tuple[float, float, float]:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.monotonic(), me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def _measured(item: pytest.Item, phase: str) -> Iterator[None]:
    out = _out()
    if out is None:
        yield
        return
    _SPAWNS.clear()
    wall, cpu, child = _usage()
    yield
    wall2, cpu2, child2 = _usage()
    out.mkdir(parents=True, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    row = {"id": item.nodeid, "phase": phase, "wall": round(wall2 - wall, 4), "cpu": round(cpu2 - cpu, 4),
           "child": round(child2 - child, 4), "spawns": dict(_SPAWNS), "end": time.time()}
    with (out / f"{worker}.jsonl").open("a") as f:
        f.write(json.dumps(row) + "\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    yield from _measured(item, "setup")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    yield from _measured(item, "call")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item: pytest.Item) -> Iterator[None]:
    yield from _measured(item, "teardown")


def report(where: Path, top: int) -> None:
    tests: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    files: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    programs: Counter[str] = Counter()
    program_by_file: dict[str, Counter[str]] = defaultdict(Counter)
    ends: dict[str, float] = {}
    starts: dict[str, float] = {}
    for path in sorted(where.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            row = json.loads(line)
            t, f = tests[row["id"]], files[row["id"].split("::", 1)[0]]
            for key in ("wall", "cpu", "child"):
                t[key] += row[key]
                f[key] += row[key]
                t[f"{row['phase']}_{key}"] += row[key]
            t["total"] += row["cpu"] + row["child"]
            f["total"] += row["cpu"] + row["child"]
            f["tests"] += row["phase"] == "call"
            programs.update(row["spawns"])
            program_by_file[row["id"].split("::", 1)[0]].update(row["spawns"])
            ends[path.stem] = max(ends.get(path.stem, 0.0), row["end"])
            starts[path.stem] = min(starts.get(path.stem, row["end"]), row["end"] - row["wall"])
    total = sum(t["total"] for t in tests.values())
    wall = sum(t["wall"] for t in tests.values())
    print(f"{len(tests)} tests: {wall:.0f} s wall in tests, {total:.0f} s CPU "
          f"({sum(t['cpu'] for t in tests.values()):.0f} s in-process, "
          f"{sum(t['child'] for t in tests.values()):.0f} s children)")
    print(f"\n## {top} tests by CPU (self+children), with setup share and wall")
    for nodeid, t in sorted(tests.items(), key=lambda kv: -kv[1]["total"])[:top]:
        print(f"{t['total']:7.1f} cpu {t['wall']:7.1f} wall  setup {t['setup_cpu'] + t['setup_child']:6.1f}"
              f"  child {t['child']:6.1f}  {nodeid}")
    print(f"\n## {top} files by CPU")
    for name, f in sorted(files.items(), key=lambda kv: -kv[1]["total"])[:top]:
        spawned = ", ".join(f"{k} {v}" for k, v in program_by_file[name].most_common(3))
        print(f"{f['total']:7.1f} cpu {f['wall']:7.1f} wall {int(f['tests']):5d} tests  {name}  [{spawned}]")
    print("\n## programs started by test processes")
    for name, count in programs.most_common(15):
        print(f"{count:7d}  {name}")
    print("\n## workers: first start, last end (s from the earliest start)")
    first = min(starts.values(), default=0.0)
    for worker in sorted(ends):
        print(f"{worker}: {starts[worker] - first:7.1f} .. {ends[worker] - first:7.1f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("where", type=Path)
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args(argv)
    report(args.where, args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
