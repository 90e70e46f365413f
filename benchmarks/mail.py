"""Mail benchmark: gitive's MCP mail tools side by side with mcp-agent-mail's, driven alike over stdio.

    .venv/bin/python benchmarks/mail.py                              # 50 messages, 40 claims, 30 inbox checks
    .venv/bin/python benchmarks/mail.py --messages 30 --claims 15 --rounds 15    # quicker

Targets (issue 21 §5): the inbox check (limit 20) and the release of a file claim at most the peer's p50;
send and claim stay at most the peer's too (gitive was ahead there when the issue was filed: keep it so).

The peer is mcp-agent-mail 0.1.0 (the git-backed agent mail server on PyPI). It is installed with pip into a
venv of its own under the cache directory (``--cache``, default ``$TMPDIR/gitive-bench``), never into gitive's
environment. It ships an HTTP transport only; the benchmark starts the same server (``build_mcp_server()``,
every tool and its storage unchanged) on FastMCP's stdio transport, so both servers are met the same way: the
official ``mcp`` SDK's ``Client`` spawns each over stdio, as a harness would. Its settings: SQLite database and
git archive in the run's temp directory, LLM features and the rich tool log (which prints to stdout, the
transport) off. When the peer cannot be installed or started, the output says why (the error) and gitive's
figures are set against the nearest honest floor instead: the transport's own round trip (``ping``) to the
same gitive server.

The same work on both, in one temp directory:

1. gitive: a team of two machines (alice, bob) on a local bare remote, each with a live Claude session
   (started through the hooks). The peer: one project, two agents registered through its ``register_agent``.
2. send: ``--messages`` messages from the second agent to the first, through each server's ``send_message``
   (gitive signs each into the mail log and pushes it to the remote; the peer writes its database and commits
   to its git archive); calls alternate between the servers so load hits both alike.
3. gitive's first machine syncs and its mail is ingested (what its daemon does), so both inboxes hold
   ``--messages`` messages. Then ``--rounds`` inbox checks of limit 20 on each, alternating: gitive's
   ``check_inbox`` (the messages framed, texts included) against the peer's ``fetch_inbox`` with
   ``include_bodies=true`` (the same content), and, for information, its default without bodies.
4. claim and release: ``--claims`` files claimed one call each (gitive ``claim_files`` for 30 minutes, the
   peer's ``file_reservation_paths`` for 1,800 s, exclusive), then each released (gitive ``claim_files`` with
   0 minutes, the peer's ``release_file_reservations``), alternating.

Every answer is checked (20 messages a page, each claim granted, each release done) before it counts. Printed:
p50 and p95 of the wall time of each call as the client sees it, the server's CPU per call (user + system of
the server process and its children, from ``/proc``: sums of per-call deltas over all calls, so tick rounding
averages out; on a machine busy with other work it is the figure to read), the ratio gitive/peer, the load
average before and after. Python byte-compiles gitive first, as an installed package is.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

# This directory holds mcp.py, named like the SDK these benchmarks drive: import the shared helpers from it
# first, then take it off the path (Python put it first) so that ``import mcp`` finds the SDK.
sys.path.insert(0, str(Path(__file__).resolve().parent))

import _common as c

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.append(str(_HERE.parent))  # testing.machines, the team the tests build too

PEER = "mcp-agent-mail==0.1.0"
PEER_SERVE = "from mcp_agent_mail.app import build_mcp_server; build_mcp_server().run(transport='stdio')"
PAGE = 20
OPS = ("send", "inbox", "claim", "release")
TARGETS = {"inbox": 1.0, "release": 1.0, "send": 1.0, "claim": 1.0}  # gitive p50 / peer p50 at most


# --- the peer's environment ---------------------------------------------------------------------------------

def peer_python(cache: Path) -> tuple[Path | None, str]:
    """The peer venv's interpreter (installed on first use), or None and the error that stopped it."""
    venv = cache / "peer-mcp-agent-mail"
    python = venv / "bin" / "python"
    check = [str(python), "-c", "import mcp_agent_mail.app"]
    if python.exists() and subprocess.run(check, capture_output=True).returncode == 0:
        return python, ""
    steps = ([sys.executable, "-m", "venv", str(venv)], [str(venv / "bin" / "pip"), "install", "-q", PEER], check)
    for cmd in steps:
        done = subprocess.run(cmd, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        if done.returncode != 0:
            lines = [ln for ln in (done.stderr or done.stdout).splitlines() if ln.strip()
                     and not ln.startswith("WARNING: Location")]
            return None, f"{' '.join(cmd[:3])}… failed ({done.returncode}): {' | '.join(lines[-3:])}"
    return python, ""


def peer_env(base: Path) -> dict[str, str]:
    storage = base / "peer"
    storage.mkdir(parents=True, exist_ok=True)
    return {**os.environ, "DATABASE_URL": f"sqlite+aiosqlite:///{storage / 'storage.sqlite3'}",
            "STORAGE_ROOT": str(storage / "archive"), "LLM_ENABLED": "false", "TOOLS_LOG_ENABLED": "false",
            "LOG_RICH_ENABLED": "false", "HTTP_RATE_LIMIT_ENABLED": "false", "GIT_AUTHOR_NAME": "peer-bench",
            "GIT_AUTHOR_EMAIL": "peer@bench.invalid",
            "MCP_TOOLS_MODE": "extended",  # file reservations as tools of their own, not behind call_extended_tool
            "LITELLM_LOCAL_MODEL_COST_MAP": "True"}  # litellm fetches a price list at import, else


# --- gitive's team ------------------------------------------------------------------------------------------

def build_team(base: Path) -> tuple[Any, Any]:
    """alice and bob on a bare remote, each with a live session registered through the hooks."""
    from gitive import hook
    from gitive.daemon.service import Service
    from testing import fixtures
    from testing.machines import Fleet

    remote = fixtures.init_bare(base / "remote.git")
    alice, bob = Fleet(base / "fleet").team(remote, ("alice", "lap"), ("bob", "desk"))
    for machine in (alice, bob):
        os.environ["GITIVE_HOME"] = str(machine.home)
        hook.handle("claude", "session-start", {"session_id": f"{machine.name}-s", "cwd": str(machine.clone),
                                                "hook_event_name": "SessionStart", "source": "startup"})
        Service().add_repo(machine.clone)
        Service().refresh_presence(force=True)
        machine.ok("sync")
    for machine in (alice, bob):
        machine.ok("sync")
    os.environ.pop("GITIVE_HOME", None)
    # The inbound guards hold a burst from one sender (30 in 10 minutes, 8 in a row without a reply): a person
    # would raise them for a scripted exchange, and the peer has none.
    (alice.home / "config.yaml").write_text("rate_limit: {messages: 100000, window_seconds: 600}\n"
                                            "loop_guard: {max_consecutive: 100000, idle_reset_seconds: 60}\n")
    return alice, bob


def ingest(machine: Any) -> None:
    """What alice's daemon does when mail arrives: sync, then take the new messages into the inbox."""
    from gitive.daemon.service import Service
    from gitive.team.hive import open_hive

    machine.ok("sync")
    os.environ["GITIVE_HOME"] = str(machine.home)
    try:
        Service().ingest_mail(open_hive(machine.clone))
    finally:
        os.environ.pop("GITIVE_HOME", None)


# --- measuring ------------------------------------------------------------------------------------------------

def _cpu(pid: int) -> float:
    """CPU seconds of ``pid`` and its waited-for children (user + system), from ``/proc``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def _children() -> set[int]:
    found: set[int] = set()
    for task in Path("/proc/self/task").glob("*/children"):
        found.update(int(p) for p in task.read_text().split())
    return found


class Server:
    """One MCP server over stdio and its figures: wall and CPU seconds per call, by operation."""

    def __init__(self, name: str, client: Any, pid: int | None) -> None:
        self.name, self.client, self.pid = name, client, pid
        self.wall: dict[str, list[float]] = {}
        self.cpu: dict[str, float] = {}

    async def call(self, op: str, tool: str, args: dict[str, Any]) -> Any:
        cpu = _cpu(self.pid) if self.pid else 0.0
        start = time.perf_counter()
        result = await self.client.call_tool(tool, args)
        wall = time.perf_counter() - start
        if self.pid:
            self.cpu[op] = self.cpu.get(op, 0.0) + _cpu(self.pid) - cpu
        if result.is_error:
            raise RuntimeError(f"{self.name} {tool} failed: {result.content}")
        self.wall.setdefault(op, []).append(wall)
        if result.structured_content is not None:
            data = result.structured_content
            return data["result"] if set(data) == {"result"} else data
        return json.loads(result.content[0].text)

    async def ping(self, times: int) -> None:
        import warnings

        warnings.filterwarnings("ignore", message="ping is removed")  # it is not, in the handshake era used here
        for _ in range(times):
            start = time.perf_counter()
            await self.client.send_ping()
            self.wall.setdefault("ping", []).append(time.perf_counter() - start)


@contextlib.asynccontextmanager
async def serve(name: str, command: str, args: list[str], env: dict[str, str], cwd: Path) -> Any:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=command, args=args, env=env, cwd=str(cwd))
    before = _children()
    async with Client(params, mode="legacy", read_timeout_seconds=300) as client:
        new = _children() - before
        yield Server(name, client, new.pop() if len(new) == 1 else None)


def _gitive_server(machine: Any) -> tuple[str, list[str], dict[str, str], Path]:
    gitive = Path(sys.executable).with_name("gitive")
    return str(gitive), ["mcp"], {**os.environ, "GITIVE_HOME": str(machine.home)}, machine.clone


async def run(base: Path, python: Path | None, messages: int, claims: int, rounds: int) -> dict[str, Any]:
    alice, bob = build_team(base)
    paths = [f"src/pkg{n % 7}/module{n}.py" for n in range(claims)]
    texts = [f"message {n}: the token cache moved to src/pkg{n % 7}; rebase before you touch module{n}.py "
             + "details " * 20 for n in range(messages)]
    out: dict[str, Any] = {}
    async with contextlib.AsyncExitStack() as stack:
        peer = None
        if python is not None:
            project = base / "peer-project"
            project.mkdir()
            peer = await stack.enter_async_context(
                serve("mcp-agent-mail", str(python), ["-c", PEER_SERVE], peer_env(base), base / "peer"))
            key = str(project)
            await peer.call("setup", "ensure_project", {"human_key": key})
            names = []
            for n in range(2):
                made = await peer.call("setup", "register_agent", {"project_key": key, "program": "claude-code",
                                                                   "model": "bench", "task_description": f"agent {n}"})
                names.append(made["name"])
            me, other = names
        # 2. send: bob's session writes to alice's, the peer's second agent to its first
        async with serve("gitive", *_gitive_server(bob)) as sender:
            await sender.ping(3)
            for n in range(messages):
                sent = await sender.call("send", "send_message", {"to": "alice/lap-claude", "text": texts[n]})
                if sent["recipients"] != ["alice/lap-claude"]:
                    raise RuntimeError(f"gitive send_message: {sent}")
                if peer is not None:
                    done = await peer.call("send", "send_message", {
                        "project_key": key, "sender_name": other, "to": [me], "subject": f"message {n}",
                        "body_md": texts[n]})
                    if not done.get("deliveries"):
                        raise RuntimeError(f"mcp-agent-mail send_message: {done}")
            out["send_gitive"] = sender
        ingest(alice)
        # 3. inbox, 4. claim and release, on alice's server
        gitive = await stack.enter_async_context(serve("gitive", *_gitive_server(alice)))
        for _ in range(2):  # warm-up: the first call loads the SDK, pygit2 and the index behind the front
            await gitive.call("warm", "check_inbox", {"limit": PAGE})
            if peer is not None:
                await peer.call("warm", "fetch_inbox", {"project_key": key, "agent_name": me, "limit": PAGE})
        for _ in range(rounds):
            box = await gitive.call("inbox", "check_inbox", {"limit": PAGE})
            if len(box["messages"]) != min(PAGE, messages) or box["total"] != messages:
                raise RuntimeError(f"gitive check_inbox: {len(box['messages'])} messages, total {box['total']}")
            if peer is not None:
                got = await peer.call("inbox", "fetch_inbox", {"project_key": key, "agent_name": me,
                                                               "limit": PAGE, "include_bodies": True})
                if len(got) != min(PAGE, messages) or "body_md" not in got[0]:
                    raise RuntimeError(f"mcp-agent-mail fetch_inbox: {len(got)} messages")
                got = await peer.call("inbox, no bodies", "fetch_inbox", {"project_key": key, "agent_name": me,
                                                                          "limit": PAGE})
                if len(got) != min(PAGE, messages):
                    raise RuntimeError(f"mcp-agent-mail fetch_inbox: {len(got)} messages")
        for path in paths:
            held = await gitive.call("claim", "claim_files", {"paths": [path], "minutes": 30})
            if path not in [h["path"] for h in held["claims"]]:
                raise RuntimeError(f"gitive claim_files: {held}")
            if peer is not None:
                got = await peer.call("claim", "file_reservation_paths", {
                    "project_key": key, "agent_name": me, "paths": [path], "ttl_seconds": 1800,
                    "exclusive": True, "reason": "bench"})
                if len(got.get("granted") or []) != 1:
                    raise RuntimeError(f"mcp-agent-mail file_reservation_paths: {got}")
        for path in paths:
            held = await gitive.call("release", "claim_files", {"paths": [path], "minutes": 0})
            if path in [h["path"] for h in held["claims"]]:
                raise RuntimeError(f"gitive release: {held}")
            if peer is not None:
                got = await peer.call("release", "release_file_reservations", {
                    "project_key": key, "agent_name": me, "paths": [path]})
                if got.get("released") != 1:
                    raise RuntimeError(f"mcp-agent-mail release_file_reservations: {got}")
        await gitive.ping(rounds)
        if peer is not None:
            await peer.ping(rounds)
        out["gitive"], out["peer"] = gitive, peer
    return out


# --- printing -------------------------------------------------------------------------------------------------

def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _figures(server: Any, op: str) -> tuple[float, float, float | None] | None:
    walls = server.wall.get(op) if server else None
    if not walls:
        return None
    cpu = server.cpu.get(op) / len(walls) if server.pid and op in server.cpu else None
    return statistics.median(walls), _pct(walls, 0.95), cpu


def _cell(found: tuple[float, float, float | None] | None) -> str:
    if found is None:
        return f"{'—':>28}"
    p50, p95, cpu = found
    return f"{p50 * 1000:7.1f} {p95 * 1000:7.1f} {('%.1f' % (cpu * 1000)) if cpu is not None else '—':>7} ms  "


def report(found: dict[str, Any], why_no_peer: str, args: argparse.Namespace, load_before: str) -> bool:
    peer = found["peer"]
    print(f"gitive mail benchmark ({args.messages} messages, {args.claims} claims, {args.rounds} inbox checks of "
          f"limit {PAGE}; each call over stdio through the mcp SDK's Client)")
    if peer is None:
        print(f"  the peer (mcp-agent-mail) could not run here: {why_no_peer}")
        print("  floor instead: the MCP transport's own round trip (ping) to the same gitive server")
    print(f"  {'':<22}{'gitive p50     p95   CPU/call':<30}{'mcp-agent-mail p50  p95  CPU/call':<36}ratio  target")
    ok = True
    floor = _figures(found["gitive"], "ping")
    for op, label in (("send", "send (with push)"), ("inbox", "inbox check, limit 20"), ("claim", "claim a file"),
                      ("release", "release a claim")):
        mine = _figures(found["send_gitive"] if op == "send" else found["gitive"], op)
        theirs = _figures(peer, op)
        assert mine is not None
        if theirs is not None:
            ratio = mine[0] / theirs[0]
            met = ratio <= TARGETS[op]
            ok &= met
            verdict = f"{ratio:5.2f}×  ≤ {TARGETS[op]:g}× the peer: {c.target(met)}"
        else:
            verdict = f"{mine[0] / floor[0]:5.1f}× the ping floor" if floor else ""
        print(f"  {label:<22}{_cell(mine)}{_cell(theirs)}{verdict}")
    if peer is not None:
        light = _figures(peer, "inbox, no bodies")
        mine = _figures(found["gitive"], "inbox")
        if light and mine:
            print(f"  {'inbox, peer w/o bodies':<22}{'':<30}{_cell(light)}{mine[0] / light[0]:5.2f}×  (informational)")
    for name, server in (("gitive", found["gitive"]), ("mcp-agent-mail", peer)):
        ping = _figures(server, "ping")
        if ping:
            print(f"  transport floor: ping to {name}: p50 {ping[0] * 1000:.2f} ms, p95 {ping[1] * 1000:.2f} ms")
    print(f"  machine: {load_before} before, {c.load()} after")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=50, help="messages sent to each inbox (default 50)")
    parser.add_argument("--claims", type=int, default=40, help="files claimed, then released (default 40)")
    parser.add_argument("--rounds", type=int, default=30, help="inbox checks on each server (default 30)")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "gitive-bench",
                        help="where the peer's venv is kept (default $TMPDIR/gitive-bench)")
    parser.add_argument("--no-peer", action="store_true", help="measure gitive alone, against the ping floor")
    parser.add_argument("--keep", action="store_true", help="keep the temp directory")
    args = parser.parse_args()
    if args.messages < PAGE or args.claims < 1 or args.rounds < 1:
        parser.error(f"--messages must be at least {PAGE} (a full page), --claims and --rounds at least 1")
    import gitive

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(gitive.__file__).parent)], env=env,
                   check=True, stdin=subprocess.DEVNULL)
    args.cache.mkdir(parents=True, exist_ok=True)
    python, why = (None, "--no-peer given") if args.no_peer else peer_python(args.cache)
    base = Path(tempfile.mkdtemp(prefix="gvmail-", dir="/tmp"))
    c.hermetic_git(base / "git")
    load_before = c.load()
    try:
        import anyio

        with c.step("building both teams, then sending, checking, claiming and releasing"):
            found = anyio.run(run, base, python, args.messages, args.claims, args.rounds)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    report(found, why, args, load_before)
    return 0


if __name__ == "__main__":
    sys.exit(main())
