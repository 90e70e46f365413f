"""The hook and the daemon socket: a hung, slow, absent or broken daemon never delays an answer, and queued
items reach the agent in the harness's shape and are acknowledged.

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

from gitive.capture import daemon_client
from gitive.capture.adapters import ADAPTERS

from .support import NO_OPINION, TeamRepo, claude_shape, cursor_shape, feed, payload_text, run_hook

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
def test_hook_with_an_unresponsive_daemon_answers_in_time(team_repo: TeamRepo, daemon: Callable[..., FakeDaemon],
                                                          delay: float | None,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITIVE_HOOK_BUDGET_MS")  # the default budget (tests/capture/test_budget.py: p95)
    fake = daemon(None) if delay is None else daemon(queue(QUEUED), delay=delay)
    run = feed("claude", "post-tool", "post-tool-bash-ok", team_repo.path)
    assert run.code == 0 and run.out == NO_OPINION, run.err
    assert run.seconds < HOOK_BUDGET_S, f"hook took {run.seconds:.2f} s"
    assert "delivered" not in fake.ops()  # nothing shown, so nothing acknowledged


def test_hook_with_an_unresponsive_daemon_still_injects_lessons(team_repo: TeamRepo,
                                                                daemon: Callable[..., FakeDaemon]) -> None:
    # With the test session's budget (3 s) the hook waits for the hung daemon until 3 s are up, then answers.
    daemon(None)
    run = feed("claude", "post-tool", "post-tool-edit", team_repo.path)
    assert run.out == claude_shape("PostToolUse", team_repo.settings.frame())
    assert 2.9 < run.seconds < 3 + HOOK_BUDGET_S


def pending_request(harness: str, session: str, event: str, room: int, cap: int) -> dict[str, Any]:
    return {"op": "pending", "harness": harness, "session": session, "hook": event, "room": room, "cap": cap}


@pytest.mark.parametrize(("harness", "event", "name", "expected"), [
    ("claude", "post-tool", "post-tool-bash-ok", claude_shape("PostToolUse", MESSAGE)),
    ("claude", "prompt", "prompt", claude_shape("UserPromptSubmit", MESSAGE)),
    ("codex", "post-tool", "post-tool-bash-ok", claude_shape("PostToolUse", MESSAGE)),
    ("cursor", "post-tool", "post-tool-shell-ok", cursor_shape(MESSAGE)),
    ("gemini", "session-start", "session-start", None),  # card first, then the message
])
def test_queued_message_reaches_the_agent_and_is_acknowledged(
        team_repo: TeamRepo, tmp_path: Path, daemon: Callable[..., FakeDaemon], harness: str, event: str,
        name: str, expected: str | None) -> None:
    fake = daemon(queue(QUEUED))
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("")
    stdin = payload_text(harness, name, team_repo.path, transcript=str(transcript)).encode()
    run = run_hook(harness, event, stdin=stdin)
    cap = ADAPTERS[harness].cap
    if expected is None:
        expected = claude_shape("SessionStart", team_repo.card() + "\n\n" + MESSAGE)
    assert run.code == 0 and run.out == expected, run.err
    session = json.loads(stdin).get("session_id") or json.loads(stdin).get("conversation_id")
    [pending, delivered] = fake.wait_for(2)
    assert pending.pop("until") > time.time() * 1000 - 5000  # when the hook stops listening
    # asked before the card is made, for the whole cap (what the card leaves no room for goes back at once)
    assert pending == pending_request(harness, session, event, cap, cap)
    assert delivered == {"op": "delivered", "ids": ["m1"], "session": session, "harness": harness}


@pytest.mark.parametrize(("harness", "event", "name"), [
    ("claude", "stop", "stop"), ("claude", "stop", "stop-active"), ("claude", "session-end", "session-end"),
    ("codex", "stop", "stop"), ("cursor", "stop", "stop"), ("cursor", "session-start", "session-start"),
    ("gemini", "session-end", "session-end")])
def test_where_a_harness_has_no_context_channel_items_wait_unasked(
        team_repo: TeamRepo, tmp_path: Path, daemon: Callable[..., FakeDaemon], harness: str, event: str,
        name: str) -> None:
    # Stop offers only continuation prompts (Claude's decision: block, Codex's reason, Cursor's
    # followup_message), which the harness turns into its user's words; Cursor's sessionStart is not waited for.
    fake = daemon(queue(QUEUED))
    run = feed(harness, event, name, team_repo.path, transcript=str(tmp_path / "none.jsonl"))
    assert run.code == 0
    assert MESSAGE not in run.out and "followup_message" not in run.out and "block" not in run.out
    assert fake.requests == []  # not even handed out: it stays queued for the next tool call


def test_lesson_and_message_share_one_reply(team_repo: TeamRepo, daemon: Callable[..., FakeDaemon]) -> None:
    daemon(queue(QUEUED))
    run = feed("claude", "post-tool", "post-tool-edit", team_repo.path)
    assert run.out == claude_shape("PostToolUse", team_repo.settings.frame() + "\n\n" + MESSAGE)


def test_an_item_the_lessons_leave_no_room_for_goes_back_to_the_queue_at_once(
        team_repo: TeamRepo, daemon: Callable[..., FakeDaemon]) -> None:
    cap = ADAPTERS["claude"].cap
    big = '<team-message from="bob/x" id="m9">' + "x" * (cap - 200) + "</team-message>"
    fake = daemon(queue({"items": [{"id": "m9", "frame": big}, {"id": "m1", "frame": MESSAGE}]}))
    run = feed("claude", "post-tool", "post-tool-edit", team_repo.path)
    assert run.out == claude_shape("PostToolUse", team_repo.settings.frame())  # the lesson took the room
    requests = fake.wait_for(2)
    assert [r["op"] for r in requests] == ["pending", "unhand"]  # nothing delivered, nothing acknowledged
    assert requests[1]["ids"] == ["m9", "m1"]  # the small one too: items go out in order


def test_the_daemon_is_asked_before_the_hook_records_the_event(team_repo: TeamRepo, short_home: Path,
                                                               daemon: Callable[..., FakeDaemon]) -> None:
    """It answers while the hook loads its code and reads the index, not after."""
    logged: list[bool] = []

    def answer(request: dict[str, Any]) -> Any:
        if request.get("op") == "pending":
            logged.append(any("tool.completed" in f.read_text() for f in (short_home / "events").rglob("*")
                              if f.is_file()))
        return queue(QUEUED)(request)

    daemon(answer)
    run = feed("claude", "post-tool", "post-tool-bash-ok", team_repo.path)
    assert run.out == claude_shape("PostToolUse", MESSAGE)
    assert logged == [False]
    assert any("tool.completed" in f.read_text() for f in (short_home / "events").rglob("*") if f.is_file())


def test_an_item_without_a_frame_is_not_acknowledged(team_repo: TeamRepo,
                                                     daemon: Callable[..., FakeDaemon]) -> None:
    fake = daemon(queue({"items": [{"id": "m2"}, {"id": "m1", "frame": MESSAGE}]}))
    run = feed("claude", "post-tool", "post-tool-bash-ok", team_repo.path)
    assert run.out == claude_shape("PostToolUse", MESSAGE)
    assert fake.wait_for(2)[-1]["ids"] == ["m1"]


@pytest.mark.parametrize("items", [{"items": "m1"}, {"items": [{"id": 5, "frame": 7}]}, {"items": None},
                                   {"nothing": True}], ids=["string", "wrong-types", "null", "no-items"])
def test_malformed_items_are_ignored(team_repo: TeamRepo, daemon: Callable[..., FakeDaemon],
                                     items: dict[str, Any]) -> None:
    fake = daemon(queue(items))
    run = feed("claude", "post-tool", "post-tool-bash-ok", team_repo.path)
    assert run.code == 0 and run.out == NO_OPINION
    assert fake.ops() == ["pending"]


def test_no_session_means_no_daemon_request(team_repo: TeamRepo, daemon: Callable[..., FakeDaemon]) -> None:
    fake = daemon(queue(QUEUED))
    body = json.loads(payload_text("claude", "post-tool-bash-ok", team_repo.path))
    del body["session_id"]
    run = run_hook("claude", "post-tool", stdin=json.dumps(body).encode())
    assert run.out == NO_OPINION
    assert fake.requests == []
