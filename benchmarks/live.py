"""Live benchmark: message latency between two machines at the default settings, through a bare remote and
through ``git daemon`` on 127.0.0.1, with the remote's request rate; the hook's wall time with a queued item;
and the daemon's resident memory while it serves 3 repositories and 20 live sessions.

    .venv/bin/python benchmarks/live.py                    # 10 minutes of memory sampling
    .venv/bin/python benchmarks/live.py --minutes 2        # shorter
    .venv/bin/python benchmarks/live.py --minutes 2 --messages 10 --runs 30     # quick

What it does (everything through real processes: the ``gitive`` CLI, ``gitive-hook`` and two daemons):

1. Setup under a short temp directory, once per transport: machine A (alice) founds a team in a clone of a
   remote and also founds teams in two more repositories (each with its own remote); machine B (bob) joins the
   first team. The remotes are bare repositories reached by path, or the same served by ``git daemon
   --verbose`` on 127.0.0.1 (``git://`` URLs, its log counting every request it serves). Each machine has its
   own ``GITIVE_HOME``. On A, 20 Claude sessions start and edit a file through ``gitive-hook`` (7, 7 and 6
   across the three repositories); ``alice/r0-claude`` is the one messages go to. Both daemons start with
   ``gitive daemon start`` at the default settings (30 s sync interval). A's ``config.yaml`` lifts the loop
   guard and the rate limit, which one agent writing to one session dozens of times would otherwise trip.
2. Latency: ``--messages`` times, B runs ``gitive send alice/r0-claude TEXT --from bob/b-claude`` (the CLI writes
   the message and pushes it at once) and A's session makes a tool call through ``gitive-hook`` every 50 ms
   until the message's frame is in the hook's output. A's daemon, which has live sessions, probes the remote's
   mail refs with ``git ls-remote`` every 2 s and syncs when they moved. Latency runs from just before the
   send to the hook output that shows it (the poll adds up to one hook run, ~0.1 s); a message is sent every
   few seconds at a random offset to the probe. p50, p95 and the maximum; a message not seen within 120 s
   counts as 120 s.
   Remote cost over that window: the requests A's and B's daemons made (probes, fetches, pushes, from ``gitive
   daemon status``) per minute, the pushes B's ``gitive send`` made, and for ``git daemon`` the requests it
   logged (``upload-pack`` for ls-remote and fetch, ``receive-pack`` for push) per minute.
3. Hook wall time with a queued item (bare remote run only): ``--runs`` times, a message (a real ULID, as if it
   had arrived) is put in A's daemon queue for a session, then ``gitive-hook claude post-tool`` runs for that
   session (a new process, the payload on stdin, as a harness runs it), interleaved with ``python -c pass`` on
   the same interpreter. p50 and p95 of both, the ratio of the medians, and how many runs printed the item.
4. Memory (bare remote run only): from the daemon's start to ``--minutes`` later, VmRSS of A's daemon from
   ``/proc/<pid>/status`` every 10 s, while every 10 s three sessions make a tool call and every 30 s B sends a
   message (the latency and hook phases run inside this window). First, last, minimum, maximum, and the
   growth from the first sample after the first minute to the last one.

Targets: message p50 ≤ 3 s and p95 ≤ 6 s at the default settings over each transport; hook p50 ≤ 3 × the bare
interpreter's p50, hook p95 ≤ 150 ms; daemon RSS ≤ 120 MB and not growing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c

BIN = Path(sys.executable).parent
GITIVE, HOOK = BIN / "gitive", BIN / "gitive-hook"
REPOS = 3
SESSIONS = 20
TARGET_SESSION = "alice/r0-claude"
GIVE_UP_S = 120.0


class Machine:
    def __init__(self, base: Path, name: str) -> None:
        self.name = name
        self.home = base / f"home-{name}"
        self.home.mkdir(mode=0o700, parents=True)
        self.env = {**os.environ, "GITIVE_HOME": str(self.home)}

    def gitive(self, *args: str, cwd: Path) -> str:
        return c.run([GITIVE, *args], cwd=cwd, env=self.env)

    def deciding(self, *args: str, cwd: Path) -> str:
        """A command that asks for the person's passphrase (init, invite, join): given on stdin, as a script does,
        so the benchmark runs without a terminal."""
        return c.run([GITIVE, *args, "--passphrase-stdin"], cwd=cwd, env=self.env,
                     input=(c.BENCH_PASSPHRASE + "\n").encode())

    def hook(self, kind: str, payload: dict[str, Any]) -> tuple[float, str]:
        start = time.perf_counter()
        proc = subprocess.run([HOOK, "claude", kind], input=json.dumps(payload).encode(), capture_output=True,
                              env={"GITIVE_HOME": str(self.home), "HOME": os.environ["HOME"],
                                   "PATH": os.environ["PATH"]})
        return time.perf_counter() - start, proc.stdout.decode()


_call = iter(range(1 << 40))


def tool_call(cwd: Path, session: str, path: str, tool: str = "Edit") -> dict[str, Any]:
    return {"session_id": session, "cwd": str(cwd), "hook_event_name": "PostToolUse", "tool_name": tool,
            "tool_input": {"file_path": str(cwd / path)}, "tool_response": {"success": True},
            "tool_use_id": f"toolu_{next(_call):08d}"}


def session_start(cwd: Path, session: str) -> dict[str, Any]:
    return {"session_id": session, "cwd": str(cwd), "hook_event_name": "SessionStart", "source": "startup"}


def clone_of(remote: Path, dest: Path) -> Path:
    c.git("clone", "--quiet", remote, dest)
    (dest / "src").mkdir()
    (dest / "src" / "app.py").write_text("print('app')\n")
    c.git("add", "src/app.py", cwd=dest)
    c.git("commit", "--quiet", "-m", "first", cwd=dest)
    c.git("push", "--quiet", "origin", "HEAD:main", cwd=dest)
    return dest


def setup(base: Path, url: Callable[[Path], str]) -> tuple[Machine, Machine, list[Path], Path]:
    """Three teams of A's around three remotes (each reached at ``url(bare path)``), B in the first one."""
    a, b = Machine(base, "a"), Machine(base, "b")
    repos = []
    for n in range(REPOS):
        remote = base / "served" / f"remote{n}.git"
        c.git("init", "--quiet", "--bare", "--initial-branch=main", remote)
        repo = clone_of(url(remote), base / f"r{n}")
        a.deciding("init", "--person", "alice", "--machine", "a", cwd=repo)
        a.gitive("sync", cwd=repo)
        repos.append(repo)
    # One agent writes to one session again and again here: lift the loop guard (8 in a row) and the rate limit
    # (30 in 10 minutes) so the figures are transport, not trust (the tests cover both limits).
    (a.home / "config.yaml").write_text("rate_limit: {messages: 100000}\nloop_guard: {max_consecutive: 100000}\n")
    code = a.deciding("invite", cwd=repos[0]).strip()
    b_clone = base / "b0"
    c.git("clone", "--quiet", url(base / "served" / "remote0.git"), b_clone)
    b.deciding("join", code, "--person", "bob", "--machine", "b", cwd=b_clone)
    a.gitive("sync", cwd=repos[0])
    return a, b, repos, b_clone


@contextlib.contextmanager
def git_daemon_serving(base: Path) -> Iterator[tuple[Callable[[Path], str], Path]]:
    """``git daemon --verbose`` on a free 127.0.0.1 port serving ``base/served``; yields a URL maker and its log."""
    import socket

    served, log = base / "served", base / "git-daemon.log"
    served.mkdir(parents=True, exist_ok=True)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with open(log, "wb") as out:
        proc = subprocess.Popen(["git", "daemon", "--verbose", "--reuseaddr", "--export-all",
                                 "--enable=receive-pack", f"--base-path={served}", "--listen=127.0.0.1",
                                 f"--port={port}", str(served)], stdin=subprocess.DEVNULL, stdout=out, stderr=out,
                                start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
            time.sleep(0.05)
        yield (lambda path: f"git://127.0.0.1:{port}/{path.relative_to(served)}"), log
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)


def served_requests(log: Path | None) -> dict[str, int]:
    """What ``git daemon --verbose`` logged serving so far: requests per service."""
    if log is None:
        return {}
    text = log.read_text(errors="replace")
    return {service: text.count(f"Request {service} for") for service in ("upload-pack", "receive-pack")}


def sessions_of(repos: list[Path]) -> list[tuple[Path, str]]:
    """20 sessions over the repositories; the first session of r0 keeps the name r0-claude."""
    return [(repos[i % REPOS], f"s{i:02d}") for i in range(SESSIONS)]


@contextlib.contextmanager
def daemon(machine: Machine, cwd: Path) -> Iterator[int]:
    """``gitive daemon start`` at the default settings (what a user gets)."""
    pid = int(json.loads(machine.gitive("daemon", "start", "--json", cwd=cwd))["pid"])
    try:
        yield pid
    finally:
        with contextlib.suppress(RuntimeError):
            machine.gitive("daemon", "stop", cwd=cwd)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)


def rss_kib(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


class Sampler(threading.Thread):
    """VmRSS of ``pid`` every ``every`` seconds until stopped: (seconds since start, KiB)."""

    def __init__(self, pid: int, every: float = 10.0) -> None:
        super().__init__(daemon=True)
        self.pid, self.every = pid, every
        self.samples: list[tuple[float, int]] = []
        self.halt = threading.Event()
        self.started_at = time.monotonic()

    def run(self) -> None:
        while True:
            value = rss_kib(self.pid)
            if value is not None:
                self.samples.append((time.monotonic() - self.started_at, value))
            if self.halt.wait(self.every):
                return


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def latency(a: Machine, b: Machine, r0: Path, b_clone: Path, count: int) -> list[float]:
    import random

    seconds = []
    rng = random.Random(9)
    for n in range(count):
        time.sleep(rng.uniform(0.5, 3.0))  # a random offset to A's probe cycle (2 s)
        start = time.perf_counter()
        sent = json.loads(b.gitive("send", TARGET_SESSION, f"latency probe {n}", "--from", "bob/b-claude",
                                   "--json", cwd=b_clone))
        while True:
            _, out = a.hook("post-tool", tool_call(r0, "s00", "README", tool="Read"))
            elapsed = time.perf_counter() - start
            if sent["id"] in out or elapsed > GIVE_UP_S:
                seconds.append(min(elapsed, GIVE_UP_S))
                break
            time.sleep(0.05)
        print(f"    message {n + 1}/{count}: {elapsed:.2f} s", file=sys.stderr, flush=True)
    return seconds


def daemon_requests(machine: Machine, cwd: Path) -> dict[str, int]:
    return json.loads(machine.gitive("daemon", "status", "--json", cwd=cwd)).get("requests") or {}


class Transport:
    """One latency run's figures: seconds per message, and what the remote was asked over that window."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.latency: list[float] = []
        self.window_s = 0.0
        self.by_daemons: dict[str, dict[str, int]] = {}
        self.served: dict[str, int] = {}


def measure_transport(name: str, a: Machine, b: Machine, repos: list[Path], b_clone: Path, count: int,
                      log: Path | None) -> Transport:
    found = Transport(name)
    with c.step(f"waiting for B to see {TARGET_SESSION} ({name})"):
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            b.gitive("sync", cwd=b_clone)
            who = json.loads(b.gitive("who", "--json", cwd=b_clone))
            if TARGET_SESSION in {r["address"] for r in who}:
                break
            time.sleep(0.5)
        else:
            raise SystemExit(f"B never saw {TARGET_SESSION}")
    before = {"a": daemon_requests(a, repos[0]), "b": daemon_requests(b, b_clone)}
    served_before, started = served_requests(log), time.monotonic()
    with c.step(f"latency of {count} messages ({name})"):
        found.latency = latency(a, b, repos[0], b_clone, count)
    found.window_s = time.monotonic() - started
    after = {"a": daemon_requests(a, repos[0]), "b": daemon_requests(b, b_clone)}
    found.by_daemons = {m: {k: after[m].get(k, 0) - before[m].get(k, 0) for k in after[m]} for m in after}
    found.served = {k: v - served_before.get(k, 0) for k, v in served_requests(log).items()}
    return found


def hook_with_queued_item(a: Machine, r1: Path, runs: int) -> tuple[list[float], list[float], int]:
    from gitive.daemon.ulid import new_ulid

    a.hook("session-start", session_start(r1, "hq"))
    time.sleep(6)  # one presence round (every 5 s) names the new session
    db = sqlite3.connect(a.home / "daemon.sqlite", timeout=10, isolation_level=None)
    name = db.execute("SELECT name FROM sessions WHERE key = 'claude:hq'").fetchone()[0]
    hooks, bare, shown = [], [], 0
    for n in range(runs + 3):
        message = new_ulid()
        db.execute("INSERT INTO inbox (id, sender, sender_machine, to_session, body, from_person, state, "
                   "received_at) VALUES (?, 'bob/b-claude', 'bench', ?, ?, 0, 'queued', ?)",
                   (message, name, f"queued item {n}", int(time.time() * 1000)))
        wall, out = a.hook("post-tool", tool_call(r1, "hq", "src/app.py", tool="Read"))
        bare_wall = c.time_command([sys.executable, "-c", "pass"], cwd=r1)
        if n >= 3:  # warm-up runs are not counted
            hooks.append(wall)
            bare.append(bare_wall)
            shown += message in out
        # Items a hook gave up on are in flight for 90 s: take them out so every run has exactly one.
        db.execute("DELETE FROM inbox WHERE id = ? AND state != 'delivered'", (message,))
        time.sleep(0.2)
    db.close()
    return hooks, bare, shown


def activity(a: Machine, b: Machine, sessions: list[tuple[Path, str]], b_clone: Path, stop: threading.Event
             ) -> None:
    """Every 10 s three sessions make a tool call; every 30 s B sends a message."""
    tick = 0
    while not stop.wait(10.0):
        for repo, session in sessions[(tick * 3) % SESSIONS:][:3]:
            a.hook("post-tool", tool_call(repo, session, "src/app.py"))
        if tick % 3 == 2:
            with contextlib.suppress(RuntimeError):
                b.gitive("send", TARGET_SESSION, f"background {tick}", "--from", "bob/b-claude", cwd=b_clone)
        tick += 1


def start_sessions(a: Machine, sessions: list[tuple[Path, str]]) -> None:
    with c.step(f"starting {SESSIONS} sessions on A through gitive-hook"):
        for repo, session in sessions:
            a.hook("session-start", session_start(repo, session))
            a.hook("post-tool", tool_call(repo, session, "src/app.py"))


def run_git_daemon(base: Path, messages: int) -> Transport:
    with git_daemon_serving(base) as (url, log):
        with c.step("founding three teams on A over git daemon, joining the first from B"):
            a, b, repos, b_clone = setup(base, url)
        sessions = sessions_of(repos)
        start_sessions(a, sessions)
        with daemon(a, repos[0]), daemon(b, b_clone):
            return measure_transport("git daemon", a, b, repos, b_clone, messages, log)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="memory sampling window (default 10)")
    parser.add_argument("--messages", type=int, default=20, help="latency samples per transport (default 20)")
    parser.add_argument("--runs", type=int, default=50, help="hook runs with a queued item (default 50)")
    parser.add_argument("--keep", action="store_true", help="keep the temp directories")
    args = parser.parse_args()

    base = Path(tempfile.mkdtemp(prefix="gvb-", dir="/tmp"))
    c.hermetic_git(base / "git")
    try:
        bare_base = base / "bare"
        bare_base.mkdir()
        with c.step("founding three teams on A over bare remotes, joining the first from B"):
            a, b, repos, b_clone = setup(bare_base, str)
        sessions = sessions_of(repos)
        start_sessions(a, sessions)
        with daemon(a, repos[0]) as pid, daemon(b, b_clone):
            sampler = Sampler(pid)
            sampler.start()
            stop = threading.Event()
            bare = measure_transport("bare remote", a, b, repos, b_clone, args.messages, None)
            background = threading.Thread(target=activity, args=(a, b, sessions, b_clone, stop), daemon=True)
            background.start()
            with c.step(f"{args.runs} hook runs with a queued item"):
                hooks, bare_py, shown = hook_with_queued_item(a, repos[1], args.runs)
            left = args.minutes * 60 - (time.monotonic() - sampler.started_at)
            with c.step(f"sampling memory for {max(0.0, left):.0f} s more"):
                if left > 0:
                    time.sleep(left)
            stop.set()
            sampler.halt.set()
            sampler.join()
            served = json.loads(a.gitive("daemon", "status", "--json", cwd=repos[0]))
            live_sessions = sum(1 for r in json.loads(a.gitive("who", "--json", cwd=repos[0])) if r["live"])
        over_daemon = run_git_daemon(base / "daemon", args.messages)
        report(args, [bare, over_daemon], hooks, bare_py, shown, sampler.samples, served, live_sessions)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    return 0


def report(args: argparse.Namespace, transports: list[Transport], hooks: list[float], bare: list[float],
           shown: int, samples: list[tuple[float, int]], served: dict[str, Any], live_sessions: int) -> None:
    print(f"gitive live benchmark ({c.load()}; {len(served.get('repos', []))} repositories served, default "
          f"settings: sync interval {served.get('interval', '?')} s, mail probe every 2 s while a session is live)")
    for t in transports:
        lat = t.latency
        p50, p95 = statistics.median(lat), pct(lat, 0.95)
        print(f"message latency over {t.name}, send on B to hook output on A ({len(lat)} messages): p50 {p50:.2f} s "
              f"({c.target(p50 <= 3.0)}: <= 3 s), p95 {p95:.2f} s ({c.target(p95 <= 6.0)}: <= 6 s), "
              f"max {max(lat):.2f} s")
        minutes = t.window_s / 60
        for who, counts in t.by_daemons.items():
            total = sum(counts.values())
            print(f"  remote requests by {who.upper()}'s daemon over {minutes:.1f} min: {total / minutes:.1f}/min "
                  f"({', '.join(f'{k} {v}' for k, v in sorted(counts.items()))})")
        print(f"  plus one push per message by B's `gitive send`: {len(lat) / minutes:.1f}/min")
        if t.served:
            total = sum(t.served.values())
            print(f"  requests git daemon served: {total / minutes:.1f}/min "
                  f"({', '.join(f'{k} {v}' for k, v in sorted(t.served.items()))}; ls-remote and fetch are "
                  "upload-pack, push is receive-pack)")
    hp50, hp95, bp50 = statistics.median(hooks), pct(hooks, 0.95), statistics.median(bare)
    print(f"hook with a queued item ({len(hooks)} runs): p50 {c.ms(hp50)}, p95 {c.ms(hp95)}; python -c pass p50 "
          f"{c.ms(bp50)}; ratio {hp50 / bp50:.1f}x ({c.target(hp50 <= 3 * bp50)}: <= 3x; p95 "
          f"{c.target(hp95 <= 0.150)}: <= 150 ms); printed the queued item in {shown}/{len(hooks)} runs")
    values = [kib for _, kib in samples]
    after_warmup = [kib for t, kib in samples if t >= 60]
    span = "after the first minute" if len(after_warmup) > 1 else "over the whole run (under a minute)"
    after_warmup = after_warmup if len(after_warmup) > 1 else values
    growth = after_warmup[-1] - after_warmup[0]
    print(f"daemon RSS over {samples[-1][0] / 60:.1f} min ({len(samples)} samples every 10 s, {live_sessions} live "
          f"sessions at the end): first {values[0] / 1024:.1f} MB, last {values[-1] / 1024:.1f} MB, "
          f"min {min(values) / 1024:.1f} MB, max {max(values) / 1024:.1f} MB; growth {span} "
          f"{growth / 1024:+.1f} MB ({c.target(max(values) <= 120 * 1024)}: <= 120 MB)")
    print("RSS samples (s, MB): " + ", ".join(f"{t:.0f}:{kib / 1024:.1f}" for t, kib in samples))


if __name__ == "__main__":
    sys.exit(main())
