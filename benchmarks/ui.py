"""Dashboard benchmark: the Memory view at 10,000 lessons (time to first byte, full load, server time) and the
memory the `gitive ui` server holds.

    .venv/bin/python benchmarks/ui.py                 # the 10,000-lesson hive recall.py builds (cached)
    .venv/bin/python benchmarks/ui.py --runs 50       # more samples

What it does: takes ``recall.py``'s scale hive (303 labelled lessons plus synthetic ones up to ``--total``,
written through the real propose/review path and cached under ``$TMPDIR/gitive-bench``; built if missing,
which takes minutes), starts the real ``gitive ui --json`` in it, and then, in the same run:

- baselines: ``/favicon.ico`` on the same server (loopback, guard, routing, no view): time to first byte;
  and the raw SQL a Memory page cannot do without (lesson counts per state and the 50 newest lessons, no
  admission check, no bodies), on a read-only connection in this process;
- the Memory view (``/memory``: counts, review queue, 50 newest verified lessons with stale-evidence checks,
  citations per day), a deep page of it (``/memory?page=100``) and a search (``/memory?q=…``): the server's
  own time (its ``Server-Timing`` header)
  and, from a client on a fresh connection each time, time to first byte and full load;
- in Debian's headless Chromium when installed: Navigation Timing of ``/memory`` (first byte and the load
  event, styles and script included);
- the server's resident memory after start, after every run above, and at its peak.

Targets: server time p50 ≤ 150 ms for the Memory view (issue 14); memory after the runs ≤ 1.5× the idle
server's (no growth per request).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c
import recall

TARGET_SERVER_MS = 150
TARGET_MEMORY_GROWTH = 1.5
QUERY = "flaky test database migration"


def _rss(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0]) * 1024
    return fields


def _get(port: int, token: str, path: str) -> tuple[float, float, float | None, int]:
    """(first byte s, full load s, server ms from Server-Timing, bytes) of one GET on a fresh connection."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    start = time.perf_counter()
    conn.request("GET", path, headers={"Host": f"127.0.0.1:{port}", "Authorization": f"Bearer {token}"})
    response = conn.getresponse()
    first = time.perf_counter() - start
    body = response.read()
    full = time.perf_counter() - start
    conn.close()
    if response.status not in (200, 204):
        raise RuntimeError(f"GET {path}: {response.status} {body[:200]!r}")
    timing = response.getheader("server-timing")
    server = float(timing.split("dur=")[1]) if timing else None
    return first, full, server, len(body)


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p * (len(ordered) - 1)))]


def _measure(port: int, token: str, path: str, runs: int) -> dict[str, Any]:
    _get(port, token, path)  # warm: the first request of a process opens its caches
    samples = [_get(port, token, path) for _ in range(runs)]
    out: dict[str, Any] = {"first": [s[0] * 1000 for s in samples], "full": [s[1] * 1000 for s in samples],
                           "bytes": samples[-1][3]}
    if samples[0][2] is not None:
        out["server"] = [s[2] for s in samples]
    return out


def _browser(port: int, token: str, runs: int, profile: Path) -> dict[str, list[float]] | None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from testing import ui as ui_testing

    if not (ui_testing.CHROMIUM.exists() and ui_testing.CHROMEDRIVER.exists()):
        return None
    import pytest

    try:
        context = ui_testing.chromium(profile)
        driver = context.__enter__()
    except pytest.skip.Exception:
        return None
    try:
        driver.get(f"http://127.0.0.1:{port}/?token={token}")
        first, load = [], []
        for _ in range(runs):
            driver.get(f"http://127.0.0.1:{port}/memory")
            nav = driver.execute_script("return performance.getEntriesByType('navigation')[0].toJSON()")
            first.append(nav["responseStart"] - nav["startTime"])
            load.append(nav["loadEventEnd"] - nav["startTime"])
        return {"first": first, "load": load}
    finally:
        context.__exit__(None, None, None)


def _raw_sql(index: Path, runs: int) -> list[float]:
    """ms of the raw queries under a Memory page: counts per state, the 50 newest lessons (no admission)."""
    conn = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
    out = []
    try:
        for _ in range(runs + 1):
            start = time.perf_counter()
            conn.execute("SELECT state, COUNT(*) FROM lesson_status GROUP BY state").fetchall()
            conn.execute("SELECT l.id, l.kind, l.tags, l.evidence, l.at FROM lessons l JOIN lesson_status s "
                         "ON s.lesson = l.id WHERE s.state = 'verified' ORDER BY l.at DESC LIMIT 50").fetchall()
            out.append((time.perf_counter() - start) * 1000)
    finally:
        conn.close()
    return out[1:]


def _line(label: str, values: list[float], baseline: float | None = None, target: float | None = None,
          sql: float | None = None) -> str:
    p50 = statistics.median(values)
    text = f"  {label:<38} p50 {p50:7.1f} ms  p95 {_pct(values, 0.95):7.1f} ms"
    if baseline:
        text += f"  = {p50 / baseline:5.1f}x the bare request"
    if sql:
        text += f", {p50 / sql:4.1f}x the raw SQL"
    if target is not None:
        text += f"  (target p50 <= {target:g} ms: {c.target(p50 <= target)})"
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--total", type=int, default=10_000, help="lessons in the hive (default 10,000)")
    parser.add_argument("--runs", type=int, default=30, help="requests timed per figure")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "gitive-bench",
                        help="where recall.py's hives are cached (default: $TMPDIR/gitive-bench)")
    args = parser.parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    c.hermetic_git(args.cache / "env")
    labelled = args.cache / f"recall-v{recall.FORMAT_VERSION}-hard-labelled"
    scale = args.cache / f"recall-v{recall.FORMAT_VERSION}-scale-{args.total}"
    data = recall.load(*recall.SETS["hard"])
    with c.step(f"labelled hive ({labelled})"):
        recall.load_or_build(labelled, lambda: recall.build_labelled(labelled, data), False, data["digest"])
    with c.step(f"scale hive ({scale})"):
        meta = recall.load_or_build(scale, lambda: recall.build_scale(labelled, scale, data, args.total, False),
                                    False, data["digest"])
    work, home = scale / "work", scale / "home"
    gitive = Path(sys.executable).with_name("gitive")
    env = {**os.environ, "GITIVE_HOME": str(home)}
    with c.step("gitive ui"):
        proc = subprocess.Popen([str(gitive), "ui", "--json"], cwd=work, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, start_new_session=True)
        assert proc.stdout is not None
        found = json.loads(proc.stdout.readline())
    port, token = found["port"], found["url"].split("token=")[1]
    try:
        idle = _rss(proc.pid)["VmRSS"]
        bare = _measure(port, token, "/favicon.ico", args.runs)
        memory = _measure(port, token, "/memory", args.runs)
        deep = _measure(port, token, "/memory?page=100", args.runs)
        raw = _raw_sql(work / ".git" / "gitive" / "index.sqlite", args.runs)
        search = _measure(port, token, f"/memory?q={QUERY.replace(' ', '+')}&proposed=1", args.runs)
        as_json = _measure(port, token, "/health", args.runs)
        with c.step("chromium"):
            browser = _browser(port, token, max(5, args.runs // 3), args.cache / "ui-chromium")
        after = _rss(proc.pid)
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=20)

    base = statistics.median(bare["first"])
    print(f"gitive ui benchmark: Memory view at {meta['lessons']:,} lessons; {c.load()}")
    sql = statistics.median(raw)
    print(f"baselines: /favicon.ico on the same server, first byte p50 {base:.1f} ms; raw SQL of a Memory page "
          f"(counts per state + 50 newest, no admission, no bodies) p50 {sql:.1f} ms ({args.runs} runs each)")
    print(_line("Memory view, server time", memory["server"], base, TARGET_SERVER_MS, sql))
    print(_line("Memory view, first byte (client)", memory["first"], base))
    print(_line(f"Memory view, full load ({memory['bytes'] // 1024} KiB)", memory["full"], base))
    print(_line("Memory page 100 (lessons 4,951-5,000)", deep["server"], base, None, sql))
    print(_line("Memory search, server time", search["server"], base))
    print(_line("Memory search, full load", search["full"], base))
    print(_line("Health view, server time", as_json["server"], base))
    if browser:
        print(_line("Chromium: Memory first byte", browser["first"], base))
        print(_line("Chromium: Memory load event", browser["load"], base))
    else:
        print("  Chromium: not installed (apt-get install chromium chromium-driver); browser figures skipped")
    growth = after["VmRSS"] / idle
    print(f"  server memory: idle {c.mib(idle)}, after {5 * (args.runs + 1)} requests {c.mib(after['VmRSS'])} "
          f"= {growth:.2f}x idle (target <= {TARGET_MEMORY_GROWTH}x: {c.target(growth <= TARGET_MEMORY_GROWTH)}), "
          f"peak {c.mib(after['VmHWM'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
