"""The daemon client: a hung, slow, absent or broken daemon never delays an answer (what a hook carries comes
through the spool, tests/capture/test_spool.py; the socket only carries requests to rank a prompt and notes
that something was delivered).

The daemon is a stand-in listening on ``$GITIVE_HOME/daemon.sock`` in a thread (the wire format is one JSON
object per line); ``GITIVE_HOME`` is a short path so the socket fits AF_UNIX's limit.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from gitive.capture import daemon_client, spool

from .support import TeamRepo, claude_shape, feed, payload_text, run_hook

MESSAGE = '<team-message from="bob/x" id="m1">hi</team-message>'
QUEUED = {"items": [{"id": "m1", "frame": MESSAGE}]}
HOOK_BUDGET_S = 1.0  # 150 ms of budget plus a process start on a busy machine, generously


class FakeDaemon:
    """Accepts on a unix socket; records each request line; answers as ``answer`` says (None: never)."""

    def __init__(self, path: Path, answer: Callable[[dict[str, Any]], Any] | None, delay: float = 0.0) -> None:
        self.path, self.answer, self.delay = path, answer, delay
        self.requests: list[dict[str, Any]] = []
        self.conns: list[socket.socket] = []
        self.stopped = threading.Event()
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(path))
        self.sock.listen(16)
        self.sock.settimeout(0.05)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            self.conns.append(conn)
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        buf = b""
        try:
            while not buf.endswith(b"\n"):
                chunk = conn.recv(65536)
                if not chunk:
                    return
                buf += chunk
            self.requests.append(json.loads(buf))
            if self.answer is None:
                self.stopped.wait(5)  # hung: holds the connection open and says nothing
                return
            if self.delay:
                time.sleep(self.delay)
            reply = self.answer(self.requests[-1])
            conn.sendall(reply if isinstance(reply, bytes) else json.dumps(reply).encode() + b"\n")
        except OSError:
            pass

    def ops(self) -> list[str]:
        return [r.get("op") for r in self.requests]

    def wait_for(self, count: int, timeout: float = 5.0) -> list[dict[str, Any]]:
        """The requests, once ``count`` have arrived (an acknowledgement is sent as the hook exits)."""
        end = time.monotonic() + timeout
        while len(self.requests) < count and time.monotonic() < end:
            time.sleep(0.01)
        return self.requests

    def close(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=2)
        self.sock.close()
        for conn in self.conns:
            conn.close()
        self.path.unlink(missing_ok=True)


@pytest.fixture
def daemon(short_home: Path) -> Iterator[Callable[..., FakeDaemon]]:
    started: list[FakeDaemon] = []

    def start(answer: Callable[[dict[str, Any]], Any] | None, delay: float = 0.0) -> FakeDaemon:
        short_home.mkdir(parents=True, exist_ok=True)
        started.append(FakeDaemon(short_home / "daemon.sock", answer, delay))
        return started[-1]

    yield start
    for d in started:
        d.close()


def queue(items: dict[str, Any]) -> Callable[[dict[str, Any]], Any]:
    """A daemon that answers ``pending`` with ``items`` and acknowledges anything else."""
    return lambda req: items if req.get("op") == "pending" else {"ok": True}


# ------------------------------------------------------------------------------------------- in-process


@pytest.mark.parametrize("delay", [None, 1.0], ids=["hung", "slow"])
def test_request_gives_up_within_its_budget(daemon: Callable[..., FakeDaemon], delay: float | None) -> None:
    fake = daemon(None) if delay is None else daemon(queue(QUEUED), delay=delay)
    start = time.monotonic()
    assert daemon_client.request({"op": "pending", "session": "s"}) is None
    assert time.monotonic() - start < 0.2
    assert fake.ops() == ["pending"]


def test_request_reads_one_reply_line(daemon: Callable[..., FakeDaemon]) -> None:
    fake = daemon(queue(QUEUED))
    assert daemon_client.request({"op": "pending", "session": "s"}) == QUEUED
    assert fake.requests == [{"op": "pending", "session": "s"}]


def test_no_socket_is_none_at_once(short_home: Path) -> None:
    start = time.monotonic()
    assert daemon_client.request({"op": "pending"}) is None
    assert time.monotonic() - start < 0.05


def test_a_stale_socket_file_is_none_at_once(short_home: Path) -> None:
    short_home.mkdir(parents=True, exist_ok=True)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(short_home / "daemon.sock"))
    stale.close()  # the file stays, nobody listens: connection refused
    start = time.monotonic()
    assert daemon_client.request({"op": "pending"}) is None
    assert time.monotonic() - start < 0.2


def test_a_regular_file_in_place_of_the_socket_is_none(short_home: Path) -> None:
    short_home.mkdir(parents=True, exist_ok=True)
    (short_home / "daemon.sock").write_text("not a socket")
    assert daemon_client.request({"op": "pending"}) is None


@pytest.mark.parametrize("reply", [b"not json\n", b"[1, 2]\n", b'"text"\n', b"\n", b'{"items": [1]'],
                         ids=["text", "list", "string", "empty-line", "no-newline"])
def test_a_garbled_reply_is_none_or_harmless(daemon: Callable[..., FakeDaemon], reply: bytes) -> None:
    daemon(lambda req: reply)
    start = time.monotonic()
    assert daemon_client.request({"op": "pending"}) is None
    assert time.monotonic() - start < 0.2


# ------------------------------------------------------------------------------------ through the hook


@pytest.mark.parametrize("delay", [None, 1.0], ids=["hung", "slow"])
def test_a_post_tool_hook_never_talks_to_the_daemon(team_repo: TeamRepo, daemon: Callable[..., FakeDaemon],
                                                   delay: float | None) -> None:
    """What a tool call carries was prepared in files: a hung or slow daemon costs it nothing."""
    fake = daemon(None) if delay is None else daemon(lambda _: {"ok": True}, delay=delay)
    run = feed("claude", "post-tool", "post-tool-edit", team_repo.path)
    assert run.code == 0 and run.out == claude_shape("PostToolUse", team_repo.settings.frame()), run.err
    assert fake.requests == []  # not even connected to
    assert run.seconds < 3 * HOOK_BUDGET_S, f"hook took {run.seconds:.2f} s"


def test_no_session_means_no_daemon_request(team_repo: TeamRepo, daemon: Callable[..., FakeDaemon]) -> None:
    fake = daemon(lambda _: {"ok": True})
    spool.beat()  # a daemon that looks alive
    body = json.loads(payload_text("claude", "prompt", team_repo.path))
    del body["session_id"]
    run = run_hook("claude", "prompt", stdin=json.dumps(body).encode())
    assert run.code == 0
    assert fake.requests == []
