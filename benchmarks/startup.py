"""Start-up benchmark: what a person waits for before a command says anything, against a bare interpreter.

    .venv/bin/python benchmarks/startup.py                 # 300 lessons, 15 runs of each command
    .venv/bin/python benchmarks/startup.py --runs 7        # quicker

What it does (real processes throughout: the ``gitive`` console script of this venv, ``git``, the SDK client):

1. Data: a bare remote and a clone with 100 files, a team founded by ``gitive init``, and ``--lessons`` lessons
   written through ``propose`` and ``review`` (nine in ten verified; the data builder of ``benchmarks/mcp.py``),
   in a fresh temp directory, synced. A Claude session starts in the clone through ``gitive-hook``, so
   ``gitive who`` has a live session to show, and every command has run once (the index is fresh).
2. Runs, interleaved round by round so load hits every command alike: ``python -c pass`` (the baseline: the
   same interpreter, ``site`` and the editable install's path hooks included), ``gitive --version``, and the
   read commands ``gitive team``, ``gitive who``, ``gitive log`` and ``gitive lessons search "…"`` as a person
   runs them (text output to a pipe). Wall time p50 of each, its ratio to the baseline's p50, and the CPU
   time the child used (user + system, from ``RUSAGE_CHILDREN``), which load inflates much less.
3. ``gitive mcp`` started by the SDK's ``Client`` over stdio in the clone, as a harness starts it: spawn to
   ``initialize`` answered, median of ``--mcp-runs``.
4. A no-op ``gitive sync`` against the same git commands it stands for: ``git fetch`` of the hive refs
   (``gitive sync``'s own command line) followed by a ``git push --porcelain`` of this machine's refs, which
   the remote already has (the baseline); then ``gitive sync`` without a daemon (the stdlib fast path), and
   ``gitive sync`` while a daemon runs (``gitive daemon start``), which answers it over its socket.

Targets (issue 9): ``--version`` ≤ 60 ms; each read command p50 ≤ 200 ms; ``gitive mcp`` initialized ≤ 0.8 s;
a no-op ``gitive sync`` answered by the daemon ≤ 2 × the git commands. Issue 21: the no-op ``gitive sync``
without a daemon costs, above the interpreter (its p50 minus ``python -c pass``'s), at most the git commands'
round trip (p50 of the fetch plus p50 of the push), in wall time and in CPU time. Figures are wall-clock on
this machine; the load average is printed, and under load compare the ratios and CPU times.

gitive is byte-compiled first (``compileall``), as an installed package is: with ``PYTHONDONTWRITEBYTECODE``
set, every start would otherwise compile its modules again.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]  # `import mcp` is the SDK


def _load(name: str) -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"bench_{name}", _HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


c = _load("_common")
BIN = Path(sys.executable).parent
GITIVE, HOOK = BIN / "gitive", BIN / "gitive-hook"
QUERY = "session cookie refresh token"
TARGETS = {"--version": 0.060, "read": 0.200, "mcp": 0.8, "sync_ratio": 2.0, "own_ratio": 1.0}


def timed_child(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one run of ``cmd`` (it must succeed)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True,
                          stdin=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def rounds(commands: dict[str, list[str]], cwd: Path, env: dict[str, str], runs: int
           ) -> dict[str, tuple[list[float], list[float]]]:
    out: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in commands}
    for n in range(runs + 1):
        for name, cmd in commands.items():
            wall, cpu = timed_child(cmd, cwd, env)
            if n:  # the first round warms the page cache
                out[name][0].append(wall)
                out[name][1].append(cpu)
    return out


def setup(base: Path, lessons: int) -> tuple[Path, Path]:
    mcp_bench = _load("mcp")
    with c.step(f"writing {lessons:,} lessons through propose and review"):
        mcp_bench.build(base / "data", lessons)
    work, home = base / "data" / "work", base / "data" / "home"
    env = {**os.environ, "GITIVE_HOME": str(home)}
    with c.step("syncing, starting a session, warming every command"):
        c.run([GITIVE, "sync"], cwd=work, env=env)
        payload = {"session_id": "bench", "cwd": str(work), "hook_event_name": "SessionStart", "source": "startup"}
        c.run([HOOK, "claude", "session-start"], cwd=work, env=env, input=json.dumps(payload).encode())
        for args in (["team"], ["who"], ["log"], ["lessons", "search", QUERY]):
            c.run([GITIVE, *args], cwd=work, env=env)
    return work, home


async def _mcp_startups(work: Path, env: dict[str, str], runs: int) -> list[float]:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=str(GITIVE), args=["mcp"], env=env, cwd=str(work))
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        async with Client(params):
            times.append(time.perf_counter() - start)
    return times


def _own_refs(work: Path) -> list[str]:
    me = c.git("config", "hive.founder", cwd=work).strip()
    names = c.git("for-each-ref", "--format=%(refname)", "refs/hive/", cwd=work).split()
    return [n for n in names if f"/{me}" in n]


def sync_figures(work: Path, env: dict[str, str], runs: int) -> dict[str, tuple[list[float], list[float]]]:
    fetch = ["git", "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "origin",
             "+refs/hive/*:refs/hive-remotes/origin/*"]
    push = ["git", "push", "--porcelain", "origin", *[f"{'' if '/logs/' in r else '+'}{r}:{r}" for r in _own_refs(work)]]
    bare = {"python -c pass": [sys.executable, "-c", "pass"], "git fetch": fetch, "git push": push,
            "gitive sync (no daemon)": [str(GITIVE), "sync"]}
    found = rounds(bare, work, env, runs)
    c.run([GITIVE, "daemon", "start", "--json"], cwd=work, env=env)
    try:
        time.sleep(2)  # its first sync and presence round
        with_daemon = rounds({"gitive sync (daemon answers)": [str(GITIVE), "sync"]}, work, env, runs)
    finally:
        with contextlib.suppress(RuntimeError):
            c.run([GITIVE, "daemon", "stop"], cwd=work, env=env)
    return {**found, **with_daemon}


def _line(name: str, walls: list[float], cpus: list[float], base: float, target: float | None) -> str:
    p50 = statistics.median(walls)
    verdict = f"  [target ≤ {target * 1000:.0f} ms: {c.target(p50 <= target)}]" if target else ""
    return (f"  {name:<34} p50 {p50 * 1000:6.0f} ms  ({p50 / base:4.1f}× python -c pass)  "
            f"CPU {statistics.median(cpus) * 1000:5.0f} ms{verdict}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lessons", type=int, default=300)
    parser.add_argument("--runs", type=int, default=15, help="runs of each command (default 15)")
    parser.add_argument("--mcp-runs", type=int, default=5)
    parser.add_argument("--keep", action="store_true", help="keep the temp directory")
    args = parser.parse_args()

    import gitive

    compiled = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(gitive.__file__).parent)], env=compiled,
                   check=True, stdin=subprocess.DEVNULL)
    base = Path(tempfile.mkdtemp(prefix="gvs-", dir="/tmp"))
    c.hermetic_git(base / "git")
    try:
        work, home = setup(base, args.lessons)
        env = {**os.environ, "GITIVE_HOME": str(home)}
        commands = {"python -c pass": [sys.executable, "-c", "pass"], "gitive --version": [str(GITIVE), "--version"],
                    "gitive team": [str(GITIVE), "team"], "gitive who": [str(GITIVE), "who"],
                    "gitive log": [str(GITIVE), "log"],
                    f'gitive lessons search "{QUERY}"': [str(GITIVE), "lessons", "search", QUERY]}
        with c.step(f"{args.runs} rounds of the start-up commands"):
            found = rounds(commands, work, env, args.runs)
        with c.step(f"{args.mcp_runs} gitive mcp start-ups over stdio"):
            mcp_times = asyncio.run(_mcp_startups(work, env, args.mcp_runs))
        with c.step(f"{args.runs} rounds of no-op syncs"):
            syncs = sync_figures(work, env, args.runs)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)

    base_p50 = statistics.median(found["python -c pass"][0])
    print(f"gitive start-up benchmark ({c.load()}; {args.lessons} lessons, {args.runs} runs each)")
    for name, (walls, cpus) in found.items():
        target = TARGETS["--version"] if name == "gitive --version" else (
            None if name == "python -c pass" else TARGETS["read"])
        print(_line(name, walls, cpus, base_p50, target))
    mcp_p50 = statistics.median(mcp_times)
    print(f"  {'gitive mcp, spawn to initialized':<34} p50 {mcp_p50 * 1000:6.0f} ms  ({mcp_p50 / base_p50:4.1f}× "
          f"python -c pass)  [target ≤ {TARGETS['mcp'] * 1000:.0f} ms: {c.target(mcp_p50 <= TARGETS['mcp'])}]")
    git_p50 = statistics.median(syncs["git fetch"][0]) + statistics.median(syncs["git push"][0])
    sync_base = statistics.median(syncs["python -c pass"][0])
    print(f"no-op sync against the git commands it stands for (baseline: p50 of git fetch + p50 of git push = "
          f"{git_p50 * 1000:.0f} ms)")
    for name, (walls, cpus) in syncs.items():
        p50 = statistics.median(walls)
        verdict = ""
        if name == "gitive sync (daemon answers)":
            ok = p50 <= TARGETS["sync_ratio"] * git_p50
            verdict = f"  [target ≤ {TARGETS['sync_ratio']:g}× git: {c.target(ok)}]"
        print(f"  {name:<34} p50 {p50 * 1000:6.0f} ms  ({p50 / git_p50:4.1f}× git, {p50 / sync_base:4.1f}× python "
              f"-c pass)  CPU {statistics.median(cpus) * 1000:5.0f} ms{verdict}")
    git_cpu = statistics.median(syncs["git fetch"][1]) + statistics.median(syncs["git push"][1])
    own = statistics.median(syncs["gitive sync (no daemon)"][0]) - sync_base
    own_cpu = statistics.median(syncs["gitive sync (no daemon)"][1]) - statistics.median(syncs["python -c pass"][1])
    ok = own <= TARGETS["own_ratio"] * git_p50 and own_cpu <= TARGETS["own_ratio"] * git_cpu
    print(f"  gitive's own cost, no daemon (p50 minus python -c pass): wall {own * 1000:.1f} ms ({own / git_p50:.2f}× "
          f"git's {git_p50 * 1000:.1f} ms), CPU {own_cpu * 1000:.1f} ms ({own_cpu / git_cpu:.2f}× git's "
          f"{git_cpu * 1000:.1f} ms)  [target ≤ git's round trip: {c.target(ok)}]")
    print(f"machine: {c.load()} at the end")
    return 0


if __name__ == "__main__":
    sys.exit(main())
