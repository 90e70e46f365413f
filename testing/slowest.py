"""The suite's slow tests, measured: reads a pytest JUnit XML and prints the slowest tests, or the list that
``tests/slow.txt`` holds (what ``make test-fast`` leaves out; ``make test`` and CI still run everything).

    python -m pytest -q -n auto --junitxml=/tmp/suite.xml
    python -m testing.slowest /tmp/suite.xml --top 20         # the table for a report
    python -m testing.slowest /tmp/suite.xml --write tests/slow.txt
    python -m testing.slowest /tmp/suite.xml --write-heavy tests/heavy.txt   # what `make test` starts with

A test is slow when one run of it (setup, call and teardown, as JUnit counts them) takes ``--threshold``
seconds or more; a parametrized test is listed once, by its function. A file most of whose tests are slow is
listed whole, so new tests there start in the slow set.
"""

from __future__ import annotations

import argparse
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

HEADER = ("# Tests `make test-fast` leaves out (`-m 'not slow'`): one run takes a second or more.\n"
          "# A line is a test (path::function), a whole file, or a folder ending in /.\n"
          "# Regenerate from a full run: python -m testing.slowest SUITE.xml --write tests/slow.txt\n")


class Timing(NamedTuple):
    seconds: float
    nodeid: str


def timings(junit: Path) -> list[Timing]:
    """Every test case of ``junit`` with its time, slowest first (node ids as pytest prints them)."""
    found = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        module = case.get("classname", "")
        parts = module.split(".")
        # classname is "tests.pkg.test_mod" or "tests.pkg.test_mod.TestClass"
        split = next((i for i in range(len(parts), 0, -1) if parts[i - 1].startswith("test_")), len(parts))
        path = "/".join(parts[:split]) + ".py"
        nodeid = "::".join([path, *parts[split:], case.get("name", "")])
        found.append(Timing(float(case.get("time", "0") or 0), nodeid))
    return sorted(found, reverse=True)


def slow_lines(found: list[Timing], threshold: float) -> list[str]:
    """The lines of ``tests/slow.txt``: slow tests by function, whole files where most tests are slow."""
    per_file: dict[str, set[str]] = defaultdict(set)
    slow: dict[str, set[str]] = defaultdict(set)
    for t in found:
        function = t.nodeid.split("[", 1)[0]
        path = function.split("::", 1)[0]
        per_file[path].add(function)
        if t.seconds >= threshold:
            slow[path].add(function)
    lines = []
    for path in sorted(slow):
        if len(slow[path]) * 2 > len(per_file[path]):
            lines.append(path)
        else:
            lines += sorted(slow[path])
    return lines


HEAVY_HEADER = ("# What the suite runs first, heaviest first: files, or folders (ending in /) whose session fixtures are\n"
                "# costly, so one worker builds them. The long tests start early and the two workers end together\n"
                "# (a 30-second test starting last adds 30 seconds). Draft from a full run, then group by folder:\n"
                "# python -m testing.slowest SUITE.xml --write-heavy tests/heavy.txt\n")


def heavy_files(found: list[Timing], top: int) -> list[str]:
    """The ``top`` files with the most test time, heaviest first."""
    per_file: dict[str, float] = defaultdict(float)
    for t in found:
        per_file[t.nodeid.split("::", 1)[0]] += t.seconds
    return sorted(per_file, key=lambda f: -per_file[f])[:top]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("junit", type=Path)
    parser.add_argument("--top", type=int, default=0, help="print the N slowest tests")
    parser.add_argument("--threshold", type=float, default=1.0, help="seconds that make a test slow")
    parser.add_argument("--write", type=Path, help="write the slow list here")
    parser.add_argument("--write-heavy", type=Path, help="write the heaviest files, heaviest first, here")
    parser.add_argument("--heavy", type=int, default=40, help="how many files --write-heavy lists")
    args = parser.parse_args(argv)
    found = timings(args.junit)
    for t in found[:args.top]:
        print(f"| {t.seconds:7.1f} s | `{t.nodeid}` |")
    if args.write:
        args.write.write_text(HEADER + "".join(line + "\n" for line in slow_lines(found, args.threshold)))
    if args.write_heavy:
        args.write_heavy.write_text(HEAVY_HEADER + "".join(f + "\n" for f in heavy_files(found, args.heavy)))
    total = sum(t.seconds for t in found)
    fast = sum(t.seconds for t in found if t.seconds < args.threshold)
    print(f"{len(found)} tests, {total:.0f} s of test time; under {args.threshold} s each: "
          f"{sum(t.seconds < args.threshold for t in found)} tests, {fast:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
