"""Real Claude Code sessions under load (issue 18 §3 Targets): the card in the first request, a message queued
during a turn in the next request, the hooks' wall time against a bare interpreter, and a quiet turn's cost.

    .venv/bin/python benchmarks/sessions.py                  # 20 sessions under load, then 5 quiet
    .venv/bin/python benchmarks/sessions.py --sessions 3 --quiet-sessions 2      # quick

What it does: builds the real-harness team once (``testing.harness.team.build``: alice and bob, eight lessons
reviewed by a person), installs gitive's Claude Code hooks and MCP server in alice's clone (``gitive install``)
and starts alice's real daemon (``python -m gitive.daemon``). Every session is the pinned ``claude -p`` against
the scripted model server (``testing/harness``), with Claude's default settings and the product's default hook
budget (no ``GITIVE_HOOK_BUDGET_MS``).

1. Under the load generator (``testing/load.py``: 2 busy processes per core), ``--sessions`` sessions, each: the
   model runs a command; while it "thinks" about the first request, bob (the real CLI) finds the session through
   alice's presence and sends it a message, and the reply goes out once alice's daemon has it queued. The
   message must be in the next request (the PostToolUse hook of that command carries it). The card (its head
   and the five card lessons) must be in the first request. Each is counted delivered, missed with a recorded
   reason (``delivery.missed``/``delivery.deferred`` in alice's event log; then it must come within two
   requests) or missed silently (``testing.deliveries``).
2. Quiet (no load), ``--quiet-sessions`` sessions of ``claude -p "say hi"``, where the turn has nothing to
   deliver.

The hooks' wall time is taken inside the real sessions: a ``gitive-hook`` shim first on the harness's PATH (the
installed hooks call ``gitive-hook`` by name) notes the time around the real one, so the figure is what Claude
Code waits for, and (through GNU ``time``, when installed) the CPU it used. ``python -c pass`` on the same
interpreter, five times before each session, is the same-run baseline. A turn with nothing to deliver is its
prompt and Stop hooks; what it adds is their wall time beyond two bare interpreters, and their CPU beyond
theirs (what the wall time comes to on a quiet machine; on a busy one the wall time is mostly the queue).

Targets (issue 18): card 20/20; message in the next request 20/20; hook p50 <= 3x bare p50 under load; a quiet
turn adds <= 50 ms on a quiet machine (the figure depends on how quiet the machine is: its load average is
printed). A silent miss, or a missed target, exits 1.
"""

from __future__ import annotations

import argparse
import contextlib
import math
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
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _common as c

from testing import live
from testing.deliveries import Tally, recorded
from testing.harness import claude, install
from testing.harness.claims import CARD_HEAD, first_with
from testing.harness.script import Call, Script, Text
from testing.harness.server import ModelServer, serving
from testing.harness.team import Team, build
from testing.harness.team import install as gitive_install
from testing.load import cpu_load

PROMPT = "Check the build, then tell me it is done."
FINAL = "Done: the build is fine."
BODY = "heads-up from bob: the staging database is read-only until 14:00, do not run migrations"
P50_RATIO_TARGET = 3.0
QUIET_TURN_TARGET_MS = 50.0
SHIM = """#!/bin/sh
s=$(date +%s%N)
{timer}{real} "$@"
r=$?
e=$(date +%s%N)
echo "$1 $2 $s $e $(tail -n 1 {log}.cpu.$$ 2>/dev/null)" >> {log}
rm -f {log}.cpu.$$
exit $r
"""
GNU_TIME = Path("/usr/bin/time")  # user and system CPU of the hook (centiseconds), when installed


def shim(base: Path, log: Path) -> Path:
    """A folder holding a ``gitive-hook`` that times the real one (what the harness waits for)."""
    folder = base / "shim"
    folder.mkdir()
    script = folder / "gitive-hook"
    timer = f'{GNU_TIME} -f "%U %S" -o {log}.cpu.$$ ' if GNU_TIME.exists() else ""
    script.write_text(SHIM.format(timer=timer, real=Path(sys.executable).with_name("gitive-hook"), log=log))
    script.chmod(0o755)
    return folder


def hook_times(log: Path, start: int) -> tuple[dict[str, list[float]], dict[str, list[float]], int]:
    """Wall and CPU milliseconds per hook event in ``log`` from line ``start`` on; and the next start."""
    lines = log.read_text().splitlines() if log.exists() else []
    wall: dict[str, list[float]] = defaultdict(list)
    cpu: dict[str, list[float]] = defaultdict(list)
    for line in lines[start:]:
        _, event, began, ended, *used = line.split()
        wall[event].append((int(ended) - int(began)) / 1e6)
        with contextlib.suppress(ValueError):
            cpu[event].append(sum(float(x) for x in used[-2:]) * 1000 if len(used) >= 2 else float("nan"))
    return wall, cpu, len(lines)


def bare_runs(runs: int = 5) -> tuple[list[float], list[float]]:
    """Wall and CPU milliseconds of ``python -c pass`` on this interpreter: the same-run baseline."""
    wall, cpu = [], []
    for _ in range(runs):
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        wall.append((time.perf_counter() - start) * 1000)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append((after.ru_utime + after.ru_stime - usage.ru_utime - usage.ru_stime) * 1000)
    return wall, cpu


def sessions_now(team: Team) -> set[str]:
    """The Claude session ids alice's daemon has seen."""
    with contextlib.closing(live.daemon_db(team.alice)) as db:
        try:
            return {k.split(":", 1)[1] for (k,) in db.execute("SELECT key FROM sessions WHERE key LIKE 'claude:%'")}
        except Exception:  # before the daemon's first round
            return set()


def alice_sessions(team: Team) -> set[str]:
    team.bob.ok("sync")
    return {a for a in live.addresses(team.bob.json("who")) if a.startswith("alice/")}


def one_loaded(team: Team, model: ModelServer, home: Path, env: dict[str, str], n: int, used: set[str]
               ) -> dict[str, Any]:
    """One session: the card, and a message bob sends during the first request. What reached the model."""
    body = f"{BODY} (#{n})"
    sent: dict[str, Any] = {}

    def bob_sends() -> None:
        fresh = live.wait_for(lambda: alice_sessions(team) - used, "alice's session seen by bob", every=0.5,
                              timeout=120)
        sent["to"] = sorted(fresh)[0]
        used.add(sent["to"])
        sent["id"] = team.bob.json("send", sent["to"], body, "--from", "bob/bob-claude")["id"]
        live.wait_for(lambda: any(row[0] == sent["id"] for row in live.inbox(team.alice)),
                      "the message in alice's daemon", every=0.2, timeout=60)

    model.script = Script([Call("Bash", {"command": "sleep 1", "description": "build"}, before=bob_sends),
                           Call("Bash", {"command": "true", "description": "check the build"}), Text(FINAL)])
    before = sessions_now(team)
    run = claude.session(model, team.alice.clone, home, team.alice.home, PROMPT, extra_env=env, budget=None)
    if run.code != 0 or model.script.errors:
        raise SystemExit(f"session {n} failed: {model.script.errors}\n{run}")
    views = run.views()
    session = sorted(sessions_now(team) - before)
    misses = recorded(team.alice.home, session[0]) if session else []
    card = [CARD_HEAD, *(lesson.short for lesson in team.card())]
    return {"card_at": next((i for i, v in enumerate(views) if all(s in v.joined() for s in card)), None),
            "message_at": first_with(views, body), "misses": misses, "session": session, "seconds": run.seconds}


def loaded_phase(team: Team, model: ModelServer, home: Path, env: dict[str, str], count: int, log: Path
                 ) -> dict[str, Any]:
    cards, messages = Tally("card in the first request"), Tally("message queued during a turn, next request")
    bare: list[float] = []
    hooks: dict[str, list[float]] = defaultdict(list)
    used: set[str] = set()
    mark = hook_times(log, 0)[2]
    seconds = []
    with cpu_load(per_core=2, seconds=3600) as load:
        for n in range(count):
            bare += bare_runs()[0]
            got = one_loaded(team, model, home, env, n, used)
            timed, _, mark = hook_times(log, mark)
            for event, ms in timed.items():
                hooks[event] += ms
            seconds.append(got["seconds"])
            for tally, at, want in ((cards, got["card_at"], 0), (messages, got["message_at"], 1)):
                tally.add(f"session {n}", True, at == want, got["misses"])
                if at != want and got["misses"] and at is not None and want < at <= want + 2:
                    tally.late += 1
            print(f"    session {n}: card in request {got['card_at']}, message in request {got['message_at']}, "
                  f"{len(got['misses'])} recorded miss(es), {got['seconds']:.1f} s", file=sys.stderr, flush=True)
    return {"cards": cards, "messages": messages, "bare": bare, "hooks": dict(hooks), "busy": load.count,
            "seconds": seconds}


def quiet_phase(team: Team, model: ModelServer, home: Path, env: dict[str, str], count: int, log: Path
                ) -> dict[str, Any]:
    bare: list[float] = []
    bare_cpu: list[float] = []
    turns: list[float] = []
    turns_cpu: list[float] = []
    hooks: dict[str, list[float]] = defaultdict(list)
    mark = hook_times(log, 0)[2]
    for n in range(count):
        wall, cpu = bare_runs()
        bare, bare_cpu = bare + wall, bare_cpu + cpu
        model.script = Script([Text("hi")])
        run = claude.session(model, team.alice.clone, home, team.alice.home, "say hi", extra_env=env, budget=None)
        if run.code != 0:
            raise SystemExit(f"quiet session {n} failed:\n{run}")
        timed, used, mark = hook_times(log, mark)
        for event, ms in timed.items():
            hooks[event] += ms
        if timed.get("prompt") and timed.get("stop"):
            turns.append(timed["prompt"][0] + timed["stop"][0])
            turns_cpu.append(used["prompt"][0] + used["stop"][0])
    return {"bare": bare, "bare_cpu": bare_cpu, "turns": turns, "turns_cpu": turns_cpu, "hooks": dict(hooks)}


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def report(loaded: dict[str, Any] | None, quiet: dict[str, Any] | None, before: str) -> bool:
    ok = True
    if loaded:
        b50 = statistics.median(loaded["bare"])
        print(f"load      {loaded['busy']} busy processes (2 per core); {len(loaded['seconds'])} real Claude Code "
              f"sessions, p50 {statistics.median(loaded['seconds']):.1f} s each; default hook budget")
        print(f"bare      `python -c pass` p50 {b50:.0f} ms  p95 {_p(loaded['bare'], 0.95):.0f} ms "
              f"({len(loaded['bare'])} runs, between the sessions)")
        every = [ms for values in loaded["hooks"].values() for ms in values]
        for event, values in sorted(loaded["hooks"].items()):
            print(f"hook      {event:<18} p50 {statistics.median(values):5.0f} ms  p95 {_p(values, 0.95):5.0f} ms  "
                  f"({statistics.median(values) / b50:.2f}x bare p50, {len(values)} calls)")
        ratio = statistics.median(every) / b50
        for tally in (loaded["cards"], loaded["messages"]):
            full = tally.delivered == tally.due
            print(f"delivery  {tally.line()}  [{tally.delivered}/{tally.due}: {c.target(full)}; no silent miss: "
                  f"{c.target(tally.ok)}]")
            if not tally.ok:
                print(f"SILENT MISS: {tally.line()}", file=sys.stderr)
            ok = ok and full and tally.ok
        print(f"targets   every hook call p50 / bare p50 = {ratio:.2f}x [<= {P50_RATIO_TARGET:.0f}x: "
              f"{c.target(ratio <= P50_RATIO_TARGET)}]")
        ok = ok and ratio <= P50_RATIO_TARGET
    if quiet:
        b50 = statistics.median(quiet["bare"])
        added = statistics.median(quiet["turns"]) - 2 * b50 if quiet["turns"] else float("nan")
        cpu = [x for x in quiet["turns_cpu"] if not math.isnan(x)]
        added_cpu = statistics.median(cpu) - 2 * statistics.median(quiet["bare_cpu"]) if cpu else float("nan")
        print(f"quiet     no load generator; `python -c pass` p50 {b50:.0f} ms; {len(quiet['turns'])} `say hi` "
              f"sessions")
        for event, values in sorted(quiet["hooks"].items()):
            print(f"hook      {event:<18} p50 {statistics.median(values):5.0f} ms  "
                  f"({statistics.median(values) / b50:.2f}x bare p50)")
        met = added <= QUIET_TURN_TARGET_MS
        print(f"targets   a turn with nothing to deliver (prompt + Stop hooks) adds {added:.0f} ms of wall time "
              f"beyond two bare interpreters [<= {QUIET_TURN_TARGET_MS:.0f} ms on a quiet machine: "
              f"{c.target(met)}]; {added_cpu:.0f} ms of CPU beyond theirs (user + system: what a quiet "
              "machine's wall time comes to)")
        ok = ok and met
    print(f"machine   before: {before}; after: {c.load()}")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=20, help="Sessions under load (default 20).")
    parser.add_argument("--quiet-sessions", type=int, default=5, help="Quiet `say hi` sessions (default 5).")
    args = parser.parse_args(argv)
    install.ensure("claude")
    base = Path(tempfile.mkdtemp(prefix="gs-", dir="/tmp"))  # short: daemon.sock lives under it
    before = c.load()
    try:
        c.hermetic_git(base / "hermetic")
        with c.step("building the team (alice, bob, eight lessons)"):
            team = build(base / "team")
        gitive_install(team.alice, "claude")
        home = base / "claude-home"
        home.mkdir()
        log = base / "hooks.log"
        env = {"PATH": f"{shim(base, log)}:{_harness_path(home)}"}  # the shim first, then the harness's PATH
        loaded = quiet = None
        with serving() as model, live.real_daemon(team.alice, interval=1):
            if args.sessions:
                with c.step(f"{args.sessions} sessions under load"):
                    loaded = loaded_phase(team, model, home, env, args.sessions, log)
            if args.quiet_sessions:
                with c.step(f"{args.quiet_sessions} quiet sessions"):
                    quiet = quiet_phase(team, model, home, env, args.quiet_sessions, log)
        return 0 if report(loaded, quiet, before) else 1
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _harness_path(home: Path) -> str:
    from testing.harness import run

    return run.base_env(home, None)["PATH"]


if __name__ == "__main__":
    raise SystemExit(main())
