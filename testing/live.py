"""Helpers for daemon tests: machines with short homes, Claude hook payloads, the hook in-process or as the
real ``gitive-hook``, the daemon's socket in a thread or the daemon as a real background process, presence
read back from a remote, and polling with deadlines.

A machine's ``GITIVE_HOME`` is process-wide state (``os.environ``): :func:`on` switches the whole process to
one machine, and an in-process daemon (:func:`serving`) must only be asked while its machine is the one
switched to. Real daemons (:class:`RealDaemon`) have their own process and environment.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from testing import fixtures
from testing.machines import Fleet, Machine

HOOK = Path(sys.executable).with_name("gitive-hook")
REMOTE = "remote.git"
T = TypeVar("T")


# --- time -------------------------------------------------------------------------------------------------


def wait_for(check: Callable[[], T], what: str, timeout: float = 20.0, every: float = 0.05) -> T:
    """Call ``check`` until it returns something truthy; return that, or fail naming ``what`` after ``timeout``."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        last = check()
        if last:
            return last
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what} (last: {last!r})")
        time.sleep(every)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


# --- machines ---------------------------------------------------------------------------------------------


@contextlib.contextmanager
def short_fleet() -> Iterator[Fleet]:
    """A :class:`Fleet` under a short ``/tmp`` directory, so ``<home>/daemon.sock`` fits AF_UNIX's 108 bytes."""
    base = Path(tempfile.mkdtemp(prefix="gv-", dir="/tmp"))
    try:
        yield Fleet(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def copy_team(template: Path, base: Path, names: list[str]) -> list[Machine]:
    """Copy a team built by :class:`Fleet` under ``template`` (clones, homes, bare remote) to ``base``.

    Each clone's ``origin`` is pointed at the copied remote, and its index (a projection whose cursors name
    absolute ref paths) is dropped, to be rebuilt from the copied refs on first use.
    """
    shutil.copytree(template / REMOTE, base / REMOTE, symlinks=True)
    machines = []
    for name in names:
        home, clone = base / "homes" / name, base / "clones" / name
        shutil.copytree(template / "homes" / name, home, symlinks=True)
        shutil.copytree(template / "clones" / name, clone, symlinks=True)
        for stale in (clone / ".git" / "gitive").glob("index.sqlite*"):
            stale.unlink()
        fixtures.run_git(["remote", "set-url", "origin", str(base / REMOTE)], cwd=clone)
        machines.append(Machine(name, home, clone))
    return machines


@contextlib.contextmanager
def on(machine: Machine) -> Iterator[Machine]:
    """Make this process ``machine``: its ``GITIVE_HOME`` and its clone as the working directory."""
    saved_home, saved_cwd = os.environ.get("GITIVE_HOME"), os.getcwd()
    os.environ["GITIVE_HOME"] = str(machine.home)
    os.chdir(machine.clone)
    try:
        yield machine
    finally:
        os.chdir(saved_cwd)
        if saved_home is None:
            os.environ.pop("GITIVE_HOME", None)
        else:
            os.environ["GITIVE_HOME"] = saved_home


def daemon_db(machine: Machine) -> sqlite3.Connection:
    """``machine``'s daemon database (autocommit), for reading and for simulating time passing."""
    return sqlite3.connect(machine.home / "daemon.sqlite", timeout=10, isolation_level=None)


def inbox(machine: Machine) -> list[tuple[str, str, str]]:
    """``(id, to_session, state)`` of every row of ``machine``'s inbox, oldest first."""
    with contextlib.closing(daemon_db(machine)) as db:
        return db.execute("SELECT id, to_session, state FROM inbox ORDER BY received_at, id").fetchall()


def write_config(machine: Machine, text: str) -> None:
    """``$GITIVE_HOME/config.yaml`` (inbound policy, rate limit, loop guard) of ``machine``."""
    (machine.home / "config.yaml").write_text(text)


# --- hook payloads (Claude Code's shape) --------------------------------------------------------------------

_calls = iter(range(1, 1 << 30))


def session_start(machine: Machine, session: str) -> dict[str, Any]:
    return {"session_id": session, "cwd": str(machine.clone), "hook_event_name": "SessionStart",
            "source": "startup", "transcript_path": "/nonexistent/transcript.jsonl"}


def edit(machine: Machine, session: str, path: str, tool: str = "Edit") -> dict[str, Any]:
    """A PostToolUse of ``tool`` on ``path`` (relative to the clone unless absolute)."""
    target = path if path.startswith("/") else str(machine.clone / path)
    return {"session_id": session, "cwd": str(machine.clone), "hook_event_name": "PostToolUse",
            "tool_name": tool, "tool_input": {"file_path": target, "old_string": "a", "new_string": "b"},
            "tool_response": {"filePath": target, "success": True}, "tool_use_id": f"toolu_{next(_calls):06d}"}


def read(machine: Machine, session: str, path: str = "README") -> dict[str, Any]:
    return edit(machine, session, path, tool="Read")


def bash(machine: Machine, session: str, command: str, output: str = "", code: int = 0) -> dict[str, Any]:
    """A PostToolUse of Claude Code's Bash tool running ``command``, which printed ``output`` and exited ``code``."""
    return {"session_id": session, "cwd": str(machine.clone), "hook_event_name": "PostToolUse", "tool_name": "Bash",
            "tool_input": {"command": command}, "tool_response": {"stdout": output, "exit_code": code},
            "tool_use_id": f"toolu_{next(_calls):06d}"}


def stop(machine: Machine, session: str, active: bool = False) -> dict[str, Any]:
    return {"session_id": session, "cwd": str(machine.clone), "hook_event_name": "Stop",
            "stop_hook_active": active}


def start_session(machine: Machine, session: str = "s1", prompt: str | None = None) -> str:
    """A Claude Code session of ``machine``'s through the real hook (in-process): its start, an optional
    prompt and one edit; returns the address this machine knows it by (``person/name``)."""
    hook(machine, "session-start", session_start(machine, session))
    if prompt is not None:
        hook(machine, "prompt", {"session_id": session, "cwd": str(machine.clone),
                                 "hook_event_name": "UserPromptSubmit", "prompt": prompt})
    hook(machine, "post-tool", edit(machine, session, "README"))
    return session_address(machine, session)


def session_address(machine: Machine, session: str, harness: str = "claude") -> str:
    """The address (``person/name``) ``machine`` knows its harness session ``session`` by."""
    from gitive.daemon.service import team_view

    with on(machine):
        view = team_view(machine.clone)  # names this machine's sessions, as presence does
    with contextlib.closing(daemon_db(machine)) as db:
        [(name,)] = db.execute("SELECT name FROM sessions WHERE key = ?", (f"{harness}:{session}",)).fetchall()
    return f"{view.person}/{name}"


def hook(machine: Machine, kind: str, payload: dict[str, Any], harness: str = "claude") -> str:
    """Run ``gitive-hook <harness> <kind>`` in-process as ``machine``; return what it would print."""
    from gitive import hook as hook_module

    with on(machine):
        return hook_module.run([harness, kind], io.StringIO(json.dumps(payload)))


@dataclass
class HookRun:
    code: int
    out: str
    err: str
    seconds: float


def hook_process(machine: Machine, kind: str, payload: dict[str, Any], harness: str = "claude") -> HookRun:
    """Run the installed ``gitive-hook`` as a process with ``machine``'s home, as a harness would."""
    env = {**os.environ, "GITIVE_HOME": str(machine.home)}
    started = time.perf_counter()
    proc = subprocess.run([str(HOOK), harness, kind], input=json.dumps(payload).encode(), capture_output=True,
                          cwd=machine.clone, env=env, timeout=30)
    return HookRun(proc.returncode, proc.stdout.decode().strip(), proc.stderr.decode(),
                   time.perf_counter() - started)


@contextlib.contextmanager
def stalled_hook(machine: Machine, kind: str, payload: dict[str, Any], harness: str = "claude"
                 ) -> Iterator[subprocess.Popen[bytes]]:
    """The real ``gitive-hook`` as a harness that stopped reading runs it: its stdout a pipe whose buffer is
    full, so it blocks writing its reply, after it claimed what the reply carries. The block waits until the
    hook holds an item of its session's spool; SIGKILL it inside (as a harness's timeout would)."""
    import fcntl

    from gitive.capture import spool

    read_fd, write_fd = os.pipe()
    fcntl.fcntl(write_fd, fcntl.F_SETFL, os.O_NONBLOCK)
    with contextlib.suppress(BlockingIOError):
        while True:
            os.write(write_fd, b"x" * 65536)
    fcntl.fcntl(write_fd, fcntl.F_SETFL, 0)
    with on(machine):
        taken = spool.session_dir(harness, str(payload["session_id"])) / "taken"
    env = {**os.environ, "GITIVE_HOME": str(machine.home)}
    proc = subprocess.Popen([str(HOOK), harness, kind], stdin=subprocess.PIPE, stdout=write_fd,
                            stderr=subprocess.DEVNULL, cwd=machine.clone, env=env)
    try:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(payload).encode())
        proc.stdin.close()
        wait_for(lambda: taken.is_dir() and any(n.endswith(f".{proc.pid}." + n.rsplit(".", 1)[-1])
                                                for n in os.listdir(taken)), "the hook to claim an item")
        yield proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        proc.wait()
        os.close(read_fd)
        os.close(write_fd)


def context_of(output: str) -> str | None:
    """The ``additionalContext`` of a Claude hook reply, or None for the no-opinion ``{}``."""
    reply = json.loads(output)
    if reply == {}:
        return None
    return str(reply["hookSpecificOutput"]["additionalContext"])


# --- the daemon in this process --------------------------------------------------------------------------


@contextlib.contextmanager
def serving(machine: Machine, interval: float = 1.0) -> Iterator[Any]:
    """The daemon's socket and :class:`~gitive.daemon.service.Service` for ``machine`` in a thread, while
    this process is ``machine`` (no timers: the test drives ``refresh_presence`` and ``sync``)."""
    from gitive.daemon.runner import SOCKET
    from gitive.daemon.server import Server
    from gitive.daemon.service import Service

    with on(machine):
        service = Service(interval)
        service.add_repo(machine.clone)

        class JoinedServer(Server):
            # Request threads outlive a hook that gave up waiting (a `delivered` signing many acks): wait for
            # them on close, or they would carry on under the next machine's (or test's) GITIVE_HOME.
            daemon_threads = False
            block_on_close = True

        server = JoinedServer(machine.home / SOCKET, service)
        thread = threading.Thread(target=server.serve_forever, name=f"test-daemon-{machine.name}", daemon=True)
        thread.start()
        try:
            yield service
        finally:
            server.shutdown()
            server.server_close()
            (machine.home / SOCKET).unlink(missing_ok=True)
            thread.join(timeout=5)


def service_for(machine: Machine) -> Any:
    """A :class:`~gitive.daemon.service.Service` serving ``machine``'s clone (use it inside :func:`on`)."""
    from gitive.daemon.service import Service

    service = Service(1.0)
    service.add_repo(machine.clone)
    return service


def publish_and_sync(machine: Machine) -> dict[str, Any]:
    """``machine``'s daemon work, once: presence recomputed and published, then a sync (which ingests mail)."""
    with on(machine):
        service = service_for(machine)
        service.refresh_presence(force=True)
        return service.sync(only_due=False)


def send(machine: Machine, to: str, body: str, *, sender: str, from_person: bool = False) -> str:
    """Send as ``sender`` from ``machine`` with the library (directory as ``machine`` sees it); no sync."""
    return send_many(machine, to, [(sender, body)], from_person=from_person)[0]


def send_many(machine: Machine, to: str, messages: list[tuple[str, str]], *, from_person: bool = False
              ) -> list[str]:
    """Send each ``(sender, body)`` of ``messages`` to ``to`` from ``machine`` (one directory look-up)."""
    from gitive.daemon import mailbox
    from gitive.daemon.service import team_view

    with on(machine):
        view = team_view(machine.clone)
        return [mailbox.send(view.hive, view.directory, view.persons, sender=sender, to=to, body=body,
                             from_person=from_person).id for sender, body in messages]


# --- the daemon as a real process ---------------------------------------------------------------------------


@dataclass
class RealDaemon:
    """A daemon started with ``gitive daemon start`` for ``machine``; stop it with :meth:`stop`."""

    machine: Machine
    pid: int

    @property
    def socket(self) -> Path:
        return self.machine.home / "daemon.sock"

    def alive(self) -> bool:
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        # A zombie still answers signal 0; its state in /proc says whether it is gone.
        try:
            return Path(f"/proc/{self.pid}/stat").read_text().split(") ", 1)[1][:1] != "Z"
        except OSError:
            return False

    def kill(self) -> None:
        """SIGKILL the daemon's process group, as a crash would end it (socket and lock file left behind)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.pid, signal.SIGKILL)
        wait_for(lambda: not self.alive(), f"daemon {self.pid} to die", timeout=10)

    def stop(self) -> None:
        """``gitive daemon stop``, then SIGKILL its process group if anything of it is left."""
        if self.alive():
            self.machine.run("daemon", "stop")
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)


def start_daemon(machine: Machine, interval: float = 1.0) -> RealDaemon:
    """``gitive daemon start --interval S --json`` in ``machine``'s clone; return the running daemon."""
    pid = int(machine.json("daemon", "start", "--interval", f"{interval:g}")["pid"])
    # Started in-process, the daemon is this process's child: reap it when it exits, as init would for the
    # real CLI's orphan, or `gitive daemon stop` waits on a zombie that still answers signal 0.
    threading.Thread(target=_reap, args=(pid,), name=f"reap-{pid}", daemon=True).start()
    return RealDaemon(machine, pid)


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


@contextlib.contextmanager
def real_daemon(machine: Machine, interval: float = 1.0) -> Iterator[RealDaemon]:
    daemon = start_daemon(machine, interval)
    try:
        yield daemon
    finally:
        daemon.stop()


def ask(machine: Machine, op: str, budget: float = 5.0, **fields: Any) -> dict[str, Any] | None:
    """One request to ``machine``'s daemon socket (``None`` when nothing answers)."""
    from gitive.capture import daemon_client

    with on(machine):
        return daemon_client.request({"op": op, **fields}, budget=budget)


# --- presence as others see it -----------------------------------------------------------------------------


def published_presence(remote: Path, machine: Machine) -> dict[str, Any] | None:
    """The presence snapshot ``machine`` last pushed to ``remote`` (``refs/hive/presence/<id>``), parsed."""
    raw = published_presence_bytes(remote, machine)
    return json.loads(raw) if raw is not None else None


def published_presence_bytes(remote: Path, machine: Machine) -> bytes | None:
    ref = f"refs/hive/presence/{machine.id}"
    if not fixtures.run_git(["for-each-ref", ref], cwd=remote).strip():
        return None
    proc = subprocess.run(["git", "cat-file", "blob", f"{ref}:presence.json"], cwd=remote, capture_output=True,
                          check=True, stdin=subprocess.DEVNULL)
    return proc.stdout


def addresses(rows: list[dict[str, Any]], live_only: bool = True) -> set[str]:
    return {r["address"] for r in rows if r.get("live") or not live_only}
