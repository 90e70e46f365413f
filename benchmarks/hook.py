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
2. Figures, in four settings: quiet and under the load generator (``testing/load.py``: 2 busy processes per
   core, started and stopped here), each without a daemon and with a real one (``python -m gitive.daemon
   --repo``, on a copy of the machine's home, serving the hive: it has prepared the card and the cited files'
   lessons, its heartbeat is fresh, and a teammate's message is queued and spooled for each round's session).
   Each round runs, interleaved and in a new session: ``python -c pass`` on the same interpreter (the
   same-run baseline), the installed ``gitive-hook claude post-tool`` fed a Claude Code ``PostToolUse`` for an
   ``Edit`` of a file a verified lesson cites (read from the index: a file only proposed lessons cite is owed
   nothing), which must inject a lesson (with a daemon also carry the message), and a turn with
   nothing to deliver: ``gitive-hook claude prompt`` with "say hi", then ``gitive-hook claude stop``. Each
   command runs as a harness runs it (a new process, the payload on stdin, only ``GITIVE_HOME``, ``HOME`` and
   ``PATH`` in its environment). p50 and p95 of each, the ratio of medians to the bare interpreter, the
   turn's cost beyond two bare interpreters, and the CPU time (user + system) each child used.
3. Import profile (quiet, no daemon): the same hook run under ``python -X importtime`` five times; the modules
   with the most self time, the hook's own cumulative import time, and any imported top-level package outside
   the standard library and gitive (the hot path must import only the standard library).

Targets (issue 18): hook p50 <= 3 x the bare interpreter's p50 in the same run, under load as quiet; on a quiet
machine a turn with nothing to deliver adds <= 50 ms beyond the interpreters it starts; the message carried in
every run with a daemon. Every due item is counted delivered, missed with a recorded reason (``delivery.missed``
in the hook's event log; then the session's next two calls must bring it) or missed silently; a silent miss fails
the run (exit 1). Absolute times depend on the machine's load; the ratios are the figures to trust.
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

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from testing.deliveries import Tally, cited_by_verified, recorded
from testing.load import cpu_load

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
            if c.run_deciding(["init", "--person", "alice", "--machine", "bench-box"], home) != 0:
                raise RuntimeError("gitive init failed")
        hive = open_hive(work)
        signer = c.person_key(home)
        with fresh_index(hive) as (conn, _):
            for n in range(lessons):
                text, kind, cited = lesson(n, paths)
                made = propose(hive, conn, kind=kind, text=text, evidence=[f"file:{f}" for f in cited])
                if n % 10:
                    review(hive, conn, made.id, approved=True, note="benchmark", signer=signer)
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
        now = time.time_ns() // 1_000_000  # live: the daemon hands it to the session's spool
        db.execute("INSERT OR REPLACE INTO sessions VALUES (?, 'claude', ?, ?, NULL, ?, ?)",
                   (f"claude:{session}", session, f"bench-{run}", now, now))
        db.execute("INSERT OR REPLACE INTO inbox (id, sender, sender_machine, to_session, body, from_person, state, "
                   "received_at) VALUES (?, 'bob/api-claude', ?, ?, ?, 0, 'queued', ?)",
                   (f"01BENCH{run:019d}", "b" * 64, f"bench-{run}",
                    "did you change the token format? the payments tests fail on my side since this morning", now))
    finally:
        db.close()
    ask(hook_home, {"op": "spool"})  # as after the sync that brought it: into the session's spool


def ask(hook_home: Path, request: dict[str, Any]) -> dict[str, Any] | None:
    env = hook_env(hook_home)
    code = ("import json, sys; from gitive.capture import daemon_client\n"
            "print(json.dumps(daemon_client.request(json.loads(sys.argv[1]), budget=30.0)))")
    done = subprocess.run([sys.executable, "-c", code, json.dumps(request)], env=env, capture_output=True, text=True)
    return json.loads(done.stdout or "null")


@contextlib.contextmanager
def real_daemon(work: Path, hook_home: Path) -> Any:
    """``python -m gitive.daemon --repo work`` for the hook's ``GITIVE_HOME``: it serves the hive, so it has
    prepared the card and the cited files' lessons (the path a hook takes with a daemon), and its heartbeat is
    fresh; it is waited for until it answers presence questions quickly (its first sync done)."""
    env = hook_env(hook_home)
    log = open(hook_home / "daemon.log", "ab")  # noqa: SIM115 - handed to the child
    proc = subprocess.Popen([sys.executable, "-m", "gitive.daemon", "--interval", "3600", "--repo", str(work)],
                            cwd=work, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    log.close()
    idle = [sys.executable, "-c", "import time; from gitive.daemon import control\n"
            "for _ in range(3):\n    t = time.perf_counter(); ok = control.ask('who', budget=10.0)\n"
            "    if not ok or time.perf_counter() - t > 0.2: raise SystemExit(1)\n    time.sleep(0.2)"]
    try:
        deadline = time.monotonic() + 300
        while subprocess.run(idle, env=env, capture_output=True).returncode != 0 or not prepared(work, hook_home):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the daemon did not come up, or never went idle; see {hook_home / 'daemon.log'}")
            time.sleep(0.5)
        yield proc
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def prepared(work: Path, hook_home: Path) -> bool:
    """The daemon has written the repository's file matches (and its heartbeat is fresh)."""
    code = ("import sys; from gitive.capture import spool\n"
            "sys.exit(0 if spool.daemon_alive() and spool.files_complete(sys.argv[1]) else 1)")
    return subprocess.run([sys.executable, "-c", code, str(work)], env=hook_env(hook_home)).returncode == 0


def prompt_payload(work: Path, run: int, text: str = "say hi") -> bytes:
    return json.dumps({"session_id": f"7c1d0e9a-2b3f-4c5d-8e6f-{run:012d}", "cwd": str(work),
                       "transcript_path": f"/home/dev/.claude/projects/-work/7c1d-{run}.jsonl",
                       "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": text}).encode()


def stop_payload(work: Path, run: int) -> bytes:
    return json.dumps({"session_id": f"7c1d0e9a-2b3f-4c5d-8e6f-{run:012d}", "cwd": str(work),
                       "transcript_path": f"/home/dev/.claude/projects/-work/7c1d-{run}.jsonl",
                       "hook_event_name": "Stop", "stop_hook_active": False,
                       "last_assistant_message": "Hi! What would you like to work on?"}).encode()


def fresh_home(work: Path, hook_home: Path, daemon: bool) -> None:
    shutil.rmtree(hook_home, ignore_errors=True)
    if daemon:  # the daemon needs the machine's own home (its key, its teams): a copy of alice's
        shutil.copytree(work.parent / "home", hook_home, symlinks=True,
                        ignore=shutil.ignore_patterns("events", "sessions", "spool", "daemon.*"))
    hook_home.mkdir(parents=True, exist_ok=True)


def measure(work: Path, hook_home: Path, runs: int, daemon: bool = False) -> dict[str, Any]:
    """Interleaved runs of the bare interpreter, the hook after an Edit of a file a verified lesson cites (with a
    queued message when a real daemon runs), and a turn with nothing to deliver (a prompt that calls for no
    lesson, then Stop). Each due item is counted delivered, missed with a recorded reason (then the session's
    next two calls must bring it), or missed silently."""
    fresh_home(work, hook_home, daemon)
    env = hook_env(hook_home)
    hook = str(hook_script())
    bare = [sys.executable, "-c", "pass"]
    cited = cited_by_verified(work / ".git" / "gitive" / "index.sqlite")
    paths = sorted(cited)  # only files a verified lesson cites: an Edit of any other is owed nothing
    times: dict[str, list[float]] = defaultdict(list)
    cpu: dict[str, list[float]] = defaultdict(list)
    counts = {"turn_quiet": 0}
    lessons, messages = Tally("lesson for the edited file"), Tally("queued message")
    with real_daemon(work, hook_home) if daemon else contextlib.nullcontext():
        for n in range(-3, runs):  # three warm-up rounds, not counted
            if daemon:
                queue_message(hook_home, 10_000 + n)
            edit = payload(work, 10_000 + n, paths)
            rounds = [("bare", bare, b""), ("edit", [hook, "claude", "post-tool"], edit),
                      ("prompt", [hook, "claude", "prompt"], prompt_payload(work, 10_000 + n)),
                      ("stop", [hook, "claude", "stop"], stop_payload(work, 10_000 + n))]
            outs = {}
            for name, cmd, data in rounds:
                seconds, used, outs[name] = once(cmd, work, env, data)
                if n >= 0:
                    times[name].append(seconds)
                    cpu[name].append(used)
            if n < 0:
                continue
            session = json.loads(edit)["session_id"]
            misses = recorded(hook_home, session)
            file_due = json.loads(edit)["tool_input"]["file_path"][len(str(work)) + 1:] in cited
            got = {"lesson": "<team-memory " in outs["edit"], "message": "<team-message " in outs["edit"]}
            lessons.add(f"round {n}", file_due, got["lesson"], misses)
            if daemon:
                messages.add(f"round {n}", True, got["message"], misses)
            if misses:  # bounded lateness: what was missed with a reason comes within the session's next 2 calls
                follow(work, env, hook, edit, {"lesson": lessons, "message": messages} if daemon
                       else {"lesson": lessons}, got)
            counts["turn_quiet"] += outs["prompt"].strip() == "{}" and outs["stop"].strip() == "{}"
    return {"times": dict(times), "cpu": dict(cpu), "runs": runs, "daemon": daemon, "lessons": lessons,
            "messages": messages, **counts}


def follow(work: Path, env: dict[str, str], hook: str, edit: bytes, tallies: dict[str, Tally],
           got: dict[str, bool]) -> None:
    """Up to two more calls of the same session (untimed), counting each missed item that arrives by then."""
    marks = {"lesson": "<team-memory ", "message": "<team-message "}
    owed = {k for k, v in got.items() if not v and k in tallies}
    again = json.loads(edit)
    for turn in range(2):
        if not owed:
            return
        again["tool_use_id"] = f"{again['tool_use_id']}-again{turn}"
        _, _, out = once([hook, "claude", "post-tool"], work, env, json.dumps(again).encode())
        for kind in [k for k in owed if marks[k] in out]:
            tallies[kind].late += 1
            owed.discard(kind)


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
            "hook_cumulative_us": statistics.median(cumulative.get("gitive.hook", [0])),
            "gitive": sorted(n for n in modules if n.startswith("gitive")), "foreign": foreign,
            "count": len(modules)}


def _line(label: str, values: list[float], bare: list[float]) -> str:
    p50, p95, b50 = statistics.median(values), pct(values, 0.95), statistics.median(bare)
    return f"{label:<44} p50 {c.ms(p50)}  p95 {c.ms(p95)}  ({p50 / b50:.2f}x bare p50)"


def report(meta: dict[str, Any], target: Path, figures: dict[str, Any], profile: dict[str, Any] | None,
           before: str, after: str, load: str) -> bool:
    t, cpu = figures["times"], figures["cpu"]
    bare = t["bare"]
    b50 = statistics.median(bare)
    ratio = statistics.median(t["edit"]) / b50
    turn = [p + s_ for p, s_ in zip(t["prompt"], t["stop"], strict=True)]
    added = statistics.median(turn) - 2 * b50
    print(f"data      {meta['lessons']:,} lessons ({', '.join(f'{n:,} {s}' for s, n in meta['states'].items())}), "
          f"cached at {target}")
    what = "a real daemon serving the hive, a message queued per run" if figures["daemon"] else "no daemon"
    print(f"runs      {load}; {what}: {figures['runs']} interleaved rounds after 3 warm-ups")
    print(f"bare      {_line('`python -c pass`', bare, bare)}")
    print(f"edit      {_line('`gitive-hook claude post-tool` (Edit, cited)', t['edit'], bare)}  "
          f"lesson in {figures['lessons'].delivered}/{figures['runs']}"
          + (f", message in {figures['messages'].delivered}/{figures['runs']}" if figures["daemon"] else ""))
    print(f"prompt    {_line('`gitive-hook claude prompt` (nothing to say)', t['prompt'], bare)}")
    print(f"stop      {_line('`gitive-hook claude stop`', t['stop'], bare)}")
    turn_cpu = [p + s_ for p, s_ in zip(cpu["prompt"], cpu["stop"], strict=True)]
    added_cpu = statistics.median(turn_cpu) - 2 * statistics.median(cpu["bare"])
    print(f"turn      prompt + stop, nothing to deliver: p50 {c.ms(statistics.median(turn))} wall, of which "
          f"{c.ms(added)} beyond two bare interpreters ({c.ms(added_cpu)} of CPU, what a quiet machine's wall "
          f"time comes to); {figures['turn_quiet']}/{figures['runs']} answered {{}}")
    hc, bc = statistics.median(cpu["edit"]), statistics.median(cpu["bare"])
    print(f"cpu       user + system p50: bare {c.ms(bc)}, edit hook {c.ms(hc)} ({hc / bc:.2f}x), prompt hook "
          f"{c.ms(statistics.median(cpu['prompt']))}, stop hook {c.ms(statistics.median(cpu['stop']))}")
    ok = ratio <= P50_RATIO_TARGET
    print(f"targets   hook p50 / bare p50 = {ratio:.2f}x [<= {P50_RATIO_TARGET:.0f}x: {c.target(ok)}]"
          + (f"; a quiet turn adds {c.ms(added)} [<= 50 ms on a quiet machine: {c.target(added <= 0.050)}]"
             if load == "quiet" else ""))
    tallies = [figures["lessons"], *([figures["messages"]] if figures["daemon"] else [])]
    for tally in tallies:
        print(f"delivery  {tally.line()}  [no silent miss: {c.target(tally.ok)}]")
        if not tally.ok:
            print(f"SILENT MISS or unexpected delivery: {tally.line()}", file=sys.stderr)
        ok = ok and tally.ok
    if profile:
        print(f"imports   {profile['count']} modules, {profile['total_us'] / 1000:.1f} ms self time in all; "
              f"gitive.hook cumulative {profile['hook_cumulative_us'] / 1000:.1f} ms (median of 5 runs "
              "of the real hook under -X importtime, which inflates it)")
        print("          top self time:")
        for name, us in profile["top"]:
            print(f"            {us / 1000:7.2f} ms  {name}")
        print(f"          gitive modules: {', '.join(profile['gitive'])}")
        foreign = ", ".join(profile["foreign"]) or "none"
        print(f"          packages outside the standard library: {foreign}  "
              f"[{'ok' if not profile['foreign'] else 'hot path must be stdlib only'}]")
    print(f"machine   before: {before}; after: {after}")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lessons", type=int, default=10_000, help="Lessons in the hive (default 10,000).")
    parser.add_argument("--runs", type=int, default=60, help="Timed rounds per setting (default 60).")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "gitive-bench")
    parser.add_argument("--regenerate", action="store_true", help="Rebuild the cached hive.")
    parser.add_argument("--build-only", action="store_true", help="Build (or find) the hive and stop.")
    parser.add_argument("--no-profile", action="store_true", help="Skip the import profile.")
    parser.add_argument("--only", choices=("quiet", "load"), help="Only the quiet or only the loaded settings.")
    args = parser.parse_args(argv)
    c.hermetic_git(args.cache / "git-env")
    target = args.cache / f"hook-v{FORMAT_VERSION}-n{args.lessons}"
    meta = load_or_build(target, args.lessons, args.regenerate)
    if args.build_only:
        print(json.dumps(meta))
        return 0
    work = target / "work"
    ok = True
    for load in [x for x in ("quiet", "load") if args.only in (None, x)]:
        for daemon in (False, True):
            before = c.load()
            title = f"{args.runs} rounds, {load}, {'a real daemon' if daemon else 'no daemon'}"
            with c.step(title), (cpu_load(per_core=2, seconds=3600) if load == "load"
                                 else contextlib.nullcontext()) as busy:
                figures = measure(work, target / ("hq" if daemon else "hh"), args.runs, daemon)
            profile = None
            if not args.no_profile and load == "quiet" and not daemon:
                with c.step("import profile"):
                    profile = import_profile(work, target / "hh")
            label = f"under load ({busy.count} busy processes, 2 per core)" if load == "load" else "quiet"
            ok = report(meta, target, figures, profile, before, c.load(), label) and ok
            print()
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
