"""Hook benchmark: wall time of ``gitive-hook claude post-tool`` against a 10,000-lesson index.

    .venv/bin/python benchmarks/hook.py                   # 10,000 lessons (cached after the first build)
    .venv/bin/python benchmarks/hook.py --lessons 300 --runs 20      # quick
    .venv/bin/python benchmarks/hook.py --build-only      # generate (or check) the cached hive and stop

What it does:

1. Data (cached under ``$TMPDIR/gitive-bench/hook-v<format>-n<lessons>/``): a bare remote and a clone with 500
   files in 25 directories, a team founded with ``gitive init --person alice`` (in-process CLI), and
   ``--lessons`` lessons written through the real ``gitive.lessons.propose.propose`` and approved through
   ``gitive.lessons.review.review`` in one process (nine in ten approved, the rest left proposed), each citing
   one or two of the files, so every file is cited by about twenty lessons. A last ``fresh_index`` leaves the
   index current and the project id where the hook reads it. How long writing took is kept in ``meta.json``.
2. Figures: the installed console script ``gitive-hook claude post-tool`` as a harness runs it (a new process,
   the payload on stdin, only ``GITIVE_HOME``, ``HOME`` and ``PATH`` in its environment, no daemon socket), fed a
   recorded-shape Claude Code ``PostToolUse`` payload for an ``Edit`` of a cited file (a new session and a
   different file every run, so every run queries the index, injects one lesson, appends two events and writes
   a session file: the hook's busiest path), interleaved run by run with ``python -c pass`` on the same
   interpreter (site imported, as for the hook), after three warm-up runs of each. p50 and p95 of both, and
   the ratio of the medians; also the CPU time (user + system) each child used, which other work on the
   machine disturbs much less than wall time.
3. Import profile: the same hook run under ``python -X importtime`` five times; the modules with the most
   self time (median over the runs), the hook's own cumulative import time, and any imported top-level
   package outside the standard library and gitive (the hot path must import only the standard library).

4. The same runs again with a real daemon (``python -m gitive.daemon``) for the hook's ``GITIVE_HOME`` and a
   teammate's message queued for each run's session (written into the daemon's inbox as its screening leaves
   it): the hook's path with a queued item (connect, ask, read, print, acknowledge), and how many runs carried
   the message.

Targets: hook p50 ≤ 3 × the bare interpreter's p50, hook p95 ≤ 150 ms, with and without a queued item, and the
message carried in every run. On a machine whose load average is above
its core count, absolute times are inflated; the ratio is the figure to trust then.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c

FORMAT_VERSION = 1
DIRS = tuple(f"pkg{d:02d}" for d in range(25))
NAMES = ("main", "models", "views", "tasks", "client", "server", "config", "errors", "cache", "io", "auth",
         "db", "jobs", "ops", "ui", "util", "web", "api", "schema", "settings")
WORDS = ("cache", "token", "session", "retry", "timeout", "migration", "schema", "deploy", "queue", "worker",
         "config", "logging", "metrics", "auth", "cookie", "refresh", "database", "index", "lock", "flaky",
         "test", "fixture", "proto", "client", "server", "release", "version", "build", "docker", "kubernetes")
KINDS = ("Gotcha", "Convention", "Correction", "Routing")
GC_EVERY = 1000  # every bodies.put rewrites the whole body tree: drop the unreachable ones as gc would
P50_RATIO_TARGET = 3.0
P95_TARGET_S = 0.150


def files() -> list[str]:
    return [f"src/{d}/{n}.py" for d in DIRS for n in NAMES]


def lesson(n: int, paths: list[str]) -> tuple[str, str, list[str]]:
    """Text, kind and cited files of synthetic lesson ``n`` (the same every run)."""
    picks = [WORDS[(n * 7 + k * 11) % len(WORDS)] for k in range(4)]
    text = (f"Lesson {n}: when the {picks[0]} and the {picks[1]} disagree, check the {picks[2]} first; "
            f"the {picks[3]} is usually stale after a restart.")
    cited = [paths[(n * 13) % len(paths)]] + ([paths[(n * 29 + 5) % len(paths)]] if n % 3 == 0 else [])
    return text, KINDS[n % len(KINDS)], list(dict.fromkeys(cited))


def build(target: Path, lessons: int) -> dict[str, Any]:
    """A hive with ``lessons`` lessons written through the real propose and review calls."""
    from gitive.cli.main import run
    from gitive.index.refresh import fresh_index
    from gitive.lessons.propose import propose
    from gitive.lessons.review import review
    from gitive.team.hive import open_hive

    shutil.rmtree(target, ignore_errors=True)
    paths = files()
    _, work, home = c.seed_repo(target, paths)
    start = time.perf_counter()
    with c.in_dir(work, home):
        with contextlib.redirect_stdout(sys.stderr):
            if run(["init", "--person", "alice", "--machine", "bench-box"]) != 0:
                raise RuntimeError("gitive init failed")
        hive = open_hive(work)
        with fresh_index(hive) as (conn, _):
            for n in range(lessons):
                text, kind, cited = lesson(n, paths)
                made = propose(hive, conn, kind=kind, text=text, evidence=[f"file:{f}" for f in cited])
                if n % 10:
                    review(hive, conn, made.id, approved=True, note="benchmark")
                if (n + 1) % 500 == 0:
                    spent = time.perf_counter() - start
                    print(f"\n    {n + 1:,} of {lessons:,} written, {spent:.0f} s, "
                          f"{spent / (n + 1) * 1000:.0f} ms per lesson", end="", file=sys.stderr, flush=True)
                if (n + 1) % GC_EVERY == 0:
                    c.git("gc", "--quiet", "--prune=now", cwd=work)
        write_seconds = time.perf_counter() - start
        c.git("gc", "--quiet", "--prune=now", cwd=work)
        with fresh_index(hive) as (conn, _):
            states = dict(conn.execute("SELECT state, count(*) FROM lesson_status GROUP BY state").fetchall())
    meta = {"format": FORMAT_VERSION, "lessons": lessons, "write_seconds": round(write_seconds, 1),
            "ms_per_lesson": round(write_seconds / max(1, lessons) * 1000, 1), "states": states}
    (target / "meta.json").write_text(json.dumps(meta) + "\n")
    return meta


def load_or_build(target: Path, lessons: int, regenerate: bool) -> dict[str, Any]:
    meta_file = target / "meta.json"
    if not regenerate and meta_file.exists():
        meta = json.loads(meta_file.read_text())
        if meta.get("format") == FORMAT_VERSION:
            return meta
    with c.step(f"writing {lessons:,} lessons through propose and review"):
        return build(target, lessons)


# ------------------------------------------------------------------------------------------ measuring


def hook_script() -> Path:
    script = Path(sys.executable).with_name("gitive-hook")
    if not script.exists():
        raise SystemExit(f"{script} is missing: install the project into this interpreter's environment")
    return script


def payload(work: Path, run: int, paths: list[str]) -> bytes:
    """A Claude Code PostToolUse payload for an Edit of a cited file, in Claude Code's own shape."""
    rel = paths[(run * 37) % len(paths)]
    original = "".join(f"def handler_{i}(request):\n    return request.json()\n\n" for i in range(40))
    return json.dumps({
        "session_id": f"5b8e2f1c-0d4a-4c1e-9a55-{run:012d}",
        "transcript_path": f"/home/dev/.claude/projects/-work/5b8e2f1c-{run}.jsonl",
        "cwd": str(work),
        "permission_mode": "default",
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": str(work / rel), "old_string": "return request.json()",
                       "new_string": "return request.get_json(silent=True)", "replace_all": False},
        "tool_response": {"filePath": str(work / rel), "oldString": "return request.json()",
                          "newString": "return request.get_json(silent=True)", "originalFile": original,
                          "structuredPatch": [{"oldStart": 2, "oldLines": 1, "newStart": 2, "newLines": 1,
                                               "lines": ["-    return request.json()",
                                                         "+    return request.get_json(silent=True)"]}],
                          "userModified": False, "replaceAll": False},
        "tool_use_id": f"toolu_01BenchEdit{run:08d}",
    }).encode()


def hook_env(hook_home: Path) -> dict[str, str]:
    return {"GITIVE_HOME": str(hook_home), "HOME": os.environ["HOME"], "PATH": os.environ.get("PATH", "")}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def once(cmd: list[str], cwd: Path, env: dict[str, str], data: bytes) -> tuple[float, float, str]:
    """Wall and CPU seconds (user + system) of one run of ``cmd``, and its stdout."""
    cpu = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, input=data, capture_output=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd} exited {proc.returncode}: {proc.stderr.decode('utf-8', 'replace')}")
    return seconds, _children_cpu() - cpu, proc.stdout.decode("utf-8", "replace")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def queue_message(hook_home: Path, run: int) -> None:
    """A teammate's message waiting for the session of ``run``, as the daemon's screening leaves it."""
    import sqlite3

    db = sqlite3.connect(hook_home / "daemon.sqlite", timeout=10, isolation_level=None)
    try:
        session = json.loads(payload(Path("/"), run, ["x"]))["session_id"]
        db.execute("INSERT OR REPLACE INTO sessions VALUES (?, 'claude', ?, ?, NULL, 1, 1)",
                   (f"claude:{session}", session, f"bench-{run}"))
        db.execute("INSERT OR REPLACE INTO inbox (id, sender, sender_machine, to_session, body, from_person, state, "
                   "received_at) VALUES (?, 'bob/api-claude', ?, ?, ?, 0, 'queued', 1)",
                   (f"01BENCH{run:019d}", "b" * 64, f"bench-{run}",
                    "did you change the token format? the payments tests fail on my side since this morning"))
    finally:
        db.close()


@contextlib.contextmanager
def real_daemon(work: Path, hook_home: Path) -> Any:
    """``python -m gitive.daemon`` for the hook's ``GITIVE_HOME``, answering on its socket once idle."""
    env = hook_env(hook_home)
    log = open(hook_home / "daemon.log", "ab")  # noqa: SIM115 - handed to the child
    # Started outside the repository, it serves no hive: its sync and presence work (which run beside the
    # socket, not on a hook's path) stay out of the figures; the hook's path through it is the real one.
    proc = subprocess.Popen([sys.executable, "-m", "gitive.daemon", "--interval", "3600"], cwd=hook_home, env=env,
                            stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    log.close()
    # Idle: it answers three presence questions in a row within 50 ms (its first sync and presence are done).
    idle = [sys.executable, "-c", "import time; from gitive.daemon import control\n"
            "for _ in range(3):\n    t = time.perf_counter(); ok = control.ask('who', budget=10.0)\n"
            "    if not ok or time.perf_counter() - t > 0.05: raise SystemExit(1)\n    time.sleep(0.2)"]
    try:
        deadline = time.monotonic() + 120
        while subprocess.run(idle, env=env, capture_output=True).returncode != 0:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the daemon did not come up, or never went idle")
            time.sleep(0.5)
        yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def measure(work: Path, hook_home: Path, runs: int, queued: bool = False) -> dict[str, Any]:
    """Interleaved runs of the hook and of the bare interpreter; counts how many runs injected a lesson (and,
    with ``queued``, delivered the teammate's message a real daemon held for the session)."""
    shutil.rmtree(hook_home, ignore_errors=True)
    if queued:  # the daemon needs the machine's own home (its key, its teams): a copy of alice's
        shutil.copytree(work.parent / "home", hook_home, symlinks=True,
                        ignore=shutil.ignore_patterns("events", "sessions", "daemon.*"))
    hook_home.mkdir(parents=True, exist_ok=True)
    env = hook_env(hook_home)
    hook = [str(hook_script()), "claude", "post-tool"]
    bare = [sys.executable, "-c", "pass"]
    paths = files()
    with real_daemon(work, hook_home) if queued else contextlib.nullcontext():
        for n in range(3):  # warm the page cache and the index file
            once(bare, work, env, b"")
            if queued:
                queue_message(hook_home, 10_000 + n)
            once(hook, work, env, payload(work, 10_000 + n, paths))
        hook_times, bare_times, hook_cpu, bare_cpu, injected, delivered = [], [], [], [], 0, 0
        for n in range(runs):
            seconds, cpu, _ = once(bare, work, env, b"")
            bare_times.append(seconds)
            bare_cpu.append(cpu)
            if queued:
                queue_message(hook_home, n)
            seconds, cpu, out = once(hook, work, env, payload(work, n, paths))
            hook_times.append(seconds)
            hook_cpu.append(cpu)
            injected += "<team-memory " in out
            delivered += "<team-message " in out
    return {"hook": hook_times, "bare": bare_times, "hook_cpu": hook_cpu, "bare_cpu": bare_cpu,
            "injected": injected, "delivered": delivered, "runs": runs, "queued": queued}


def import_profile(work: Path, hook_home: Path, repeats: int = 5) -> dict[str, Any]:
    """Self and cumulative import times (µs, median over ``repeats`` runs of the real hook)."""
    env = hook_env(hook_home)
    cmd = [sys.executable, "-X", "importtime", str(hook_script()), "claude", "post-tool"]
    self_us: dict[str, list[int]] = defaultdict(list)
    cumulative: dict[str, list[int]] = defaultdict(list)
    for n in range(repeats):
        proc = subprocess.run(cmd, cwd=work, env=env, input=payload(work, 20_000 + n, files()), capture_output=True)
        for line in proc.stderr.decode("utf-8", "replace").splitlines():
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            own, cum, name = (part.strip() for part in line[len("import time:"):].split("|"))
            self_us[name].append(int(own))
            cumulative[name].append(int(cum))
    modules = {name: statistics.median(v) for name, v in self_us.items()}
    tops = {name.split(".")[0] for name in modules}
    # -X importtime also lists failed probes (``sitecustomize``; ``copy`` looking for Jython's ``org``):
    # only a package that can be found counts as imported.
    foreign = sorted(t for t in tops if t not in sys.stdlib_module_names and t != "gitive"
                     and not t.startswith("_") and importlib.util.find_spec(t) is not None)
    return {"top": sorted(modules.items(), key=lambda kv: -kv[1])[:15], "total_us": sum(modules.values()),
            "hook_cumulative_us": statistics.median(cumulative.get("gitive.capture.hook", [0])),
            "gitive": sorted(n for n in modules if n.startswith("gitive")), "foreign": foreign,
            "count": len(modules)}


def report(meta: dict[str, Any], target: Path, figures: dict[str, Any], profile: dict[str, Any] | None,
           before: str, after: str) -> bool:
    hook, bare = figures["hook"], figures["bare"]
    h50, h95, b50, b95 = statistics.median(hook), pct(hook, 0.95), statistics.median(bare), pct(bare, 0.95)
    ratio = h50 / b50
    ok = ratio <= P50_RATIO_TARGET and h95 <= P95_TARGET_S
    print(f"data      {meta['lessons']:,} lessons ({', '.join(f'{n:,} {s}' for s, n in meta['states'].items())}), "
          f"written through propose + review in {meta['write_seconds']} s ({meta['ms_per_lesson']} ms a lesson; "
          f"cached at {target})")
    what = "with a queued message, real daemon" if figures["queued"] else "no daemon"
    print(f"runs      {what}: {figures['runs']} interleaved pairs after 3 warm-ups; the hook injected a lesson in "
          f"{figures['injected']} of {figures['runs']}"
          + (f" and delivered the message in {figures['delivered']} of {figures['runs']}" if figures["queued"]
             else ""))
    print(f"bare      `{Path(sys.executable).name} -c pass`          p50 {c.ms(b50)}  p95 {c.ms(b95)}")
    print(f"hook      `gitive-hook claude post-tool` (Edit)  p50 {c.ms(h50)}  p95 {c.ms(h95)}")
    hc, bc = statistics.median(figures["hook_cpu"]), statistics.median(figures["bare_cpu"])
    print(f"cpu       user + system, p50: bare {c.ms(bc)}, hook {c.ms(hc)} ({hc / bc:.2f}x): the figures to read "
          "when the load average is above the core count")
    print(f"ratio     hook p50 / bare p50 = {ratio:.2f}x  [target <= {P50_RATIO_TARGET:.0f}x: "
          f"{c.target(ratio <= P50_RATIO_TARGET)}];  hook p95 {c.ms(h95)}  [target <= "
          f"{P95_TARGET_S * 1000:.0f} ms: {c.target(h95 <= P95_TARGET_S)}];  gitive's own share of p50 "
          f"{c.ms(h50 - b50)}")
    if profile:
        print(f"imports   {profile['count']} modules, {profile['total_us'] / 1000:.1f} ms self time in all; "
              f"gitive.capture.hook cumulative {profile['hook_cumulative_us'] / 1000:.1f} ms (median of 5 runs "
              "of the real hook under -X importtime, which inflates it)")
        print("          top self time:")
        for name, us in profile["top"]:
            print(f"            {us / 1000:7.2f} ms  {name}")
        print(f"          gitive modules: {', '.join(profile['gitive'])}")
        foreign = ", ".join(profile["foreign"]) or "none"
        print(f"          packages outside the standard library: {foreign}  "
              f"[{'ok' if not profile['foreign'] else 'hot path must be stdlib only'}]")
    print(f"machine   before: {before}; after: {after}")
    if figures["queued"]:
        ok = ok and figures["delivered"] == figures["runs"]
        print(f"delivery  {figures['delivered']} of {figures['runs']} runs carried the message  [target: every run: "
              f"{c.target(figures['delivered'] == figures['runs'])}]")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lessons", type=int, default=10_000, help="Lessons in the hive (default 10,000).")
    parser.add_argument("--runs", type=int, default=60, help="Timed runs of each command (default 60, min 50 "
                                                              "for the p95 to mean anything).")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "gitive-bench")
    parser.add_argument("--regenerate", action="store_true", help="Rebuild the cached hive.")
    parser.add_argument("--build-only", action="store_true", help="Build (or find) the hive and stop.")
    parser.add_argument("--no-profile", action="store_true", help="Skip the import profile.")
    args = parser.parse_args(argv)
    c.hermetic_git(args.cache / "git-env")
    target = args.cache / f"hook-v{FORMAT_VERSION}-n{args.lessons}"
    meta = load_or_build(target, args.lessons, args.regenerate)
    if args.build_only:
        print(json.dumps(meta))
        return 0
    work = target / "work"
    hook_home = target / "hook-home"
    before = c.load()
    with c.step(f"{args.runs} interleaved runs of the hook and the bare interpreter"):
        figures = measure(work, hook_home, args.runs)
    profile = None
    if not args.no_profile:
        with c.step("import profile"):
            profile = import_profile(work, hook_home)
    report(meta, target, figures, profile, before, c.load())
    print()
    before = c.load()
    with c.step(f"{args.runs} interleaved runs with a message queued by a real daemon"):
        queued = measure(work, target / "hq", args.runs, queued=True)  # a short home: the socket path
    report(meta, target, queued, None, before, c.load())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
