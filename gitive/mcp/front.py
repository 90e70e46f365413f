"""``gitive mcp`` starts here: a standard-library front that owns stdin and stdout and hands over to the SDK.

Harnesses drop a server that is slow to answer ``initialize`` (Claude Code gives up after about 6 s and starts
the session without its tools), and the SDK alone takes 0.7 to 1.5 s of CPU to import, several seconds on a busy
machine. So the front answers the handshake and the tool list from the tool table at once
(:mod:`gitive.mcp.wire`), and loads the SDK, pygit2 and the index on a thread of their own only when a request
needs them, or :data:`WARM_SECONDS` into the connection. A harness runs its hooks and its model turn in those
first seconds, and a ``claude -p`` session that calls no gitive tool is over before then: loading the SDK at
the handshake took that CPU from the session (``claude -p "say hi"`` took 0.9 s longer with ``gitive mcp``
than without on two quiet cores, benchmarks/claude_overhead.py):

- **Everything reaches the SDK, in order.** A message the front answered is passed on too, under a private id,
  so the SDK's state (the era, the negotiated version, the client's capabilities) is what it would be without
  the front; its answer to that copy is compared with the front's and dropped.
- **Text is made safe first.** Each line is read as UTF-8 with bad bytes replaced, and lone surrogates in the
  parsed JSON become U+FFFD (the SDK's reader refuses such a line and the call would hang); a line that is not
  JSON gets a parse error at once, as JSON-RPC asks.
- **Every call is answered before exit.** When stdin closes, the front waits until the SDK has answered every
  request it was handed (up to :data:`DRAIN_SECONDS`), then stops it. The SDK alone cancels them at EOF.
  SIGINT and SIGTERM end the process at once: that is how a client stops its server (Claude Code sends SIGINT,
  then SIGTERM 100 ms later, and waits for the exit), so nothing it could still read is owed.
- **stdout is the wire only.** fd 1 points at stderr while serving and fd 0 at the null device, so nothing a
  library or a git child prints can corrupt a message, and no child reads the client's input.

If the SDK cannot load, every request is answered with that reason instead of hanging.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

from gitive.mcp import wire
from gitive.mcp.schema import clean

DRAIN_SECONDS = 120.0  # how long answers still in work may take after stdin closes
WARM_SECONDS = 10.0  # the SDK starts loading this long after the first message, if no request needed it before
MAX_LINE = 8 * 1024 * 1024  # bytes of one message
PRIVATE = "gitive-front-"  # prefix of the ids the front gives the copies it hands on
PARSE_ERROR, INVALID_REQUEST, INTERNAL_ERROR = -32700, -32600, -32603


class Front:
    """One connection: early answers, the hand-over queue to the SDK, and the requests still owed an answer."""

    def __init__(self, repo: Path | str | None, out: IO[bytes]) -> None:
        self.repo, self.out = repo, out
        self.early = wire.Early()
        self.inbox: queue.Queue[Any] = queue.Queue()
        self.owed: set[Any] = set()  # ids of requests handed to the SDK and not answered yet
        self.copies: dict[str, dict[str, Any]] = {}  # private id -> the front's own answer
        self.settled = threading.Condition()
        self.lock = threading.Lock()  # one writer at a time on the wire
        self.sdk: threading.Thread | None = None
        self.timer: threading.Timer | None = None
        self.broken: str | None = None  # why the SDK could not serve, once it failed
        self.finishing = False  # stdin has closed: the SDK is expected to stop
        self.abandoned = False  # stdin closed with nothing owed while the SDK was still loading
        self.seq = 0

    def serve(self, wire_in: IO[bytes]) -> None:
        """Read messages until stdin closes, then wait for the answers owed and stop the SDK."""
        for line in _lines(wire_in):
            self.take(line)
        self.finish()

    def take(self, line: bytes | None) -> None:
        """Handle one line from the client (None: it was longer than :data:`MAX_LINE`)."""
        if line is None:
            return self.write(_error(None, INVALID_REQUEST, f"message over {MAX_LINE // 1024 // 1024} MiB refused"))
        text = line.decode("utf-8", "replace").strip()
        if not text:
            return None
        try:
            message = clean(json.loads(text))
        except ValueError as exc:
            return self.write(_error(None, PARSE_ERROR, f"parse error: {str(exc)[:120]}"))
        if not isinstance(message, dict):
            return self.write(_error(None, INVALID_REQUEST, "one JSON-RPC message per line (no batches)"))
        result = self.early.answer(message)
        if result is not None:
            self.write({"jsonrpc": "2.0", "id": message["id"], "result": result})
            self.seq += 1
            private = f"{PRIVATE}{self.seq}"
            self.copies[private] = result
            self.hand_on({**message, "id": private}, start=False)
        else:
            self._expect(message)
            self.hand_on(message, start="id" in message)
        return None

    def _expect(self, message: dict[str, Any]) -> None:
        """Note the answer a request is owed, or one a cancellation releases (a cancelled request gets none)."""
        with self.settled:
            if "method" in message and "id" in message:
                self.owed.add(_key(message["id"]))
            elif message.get("method") == "notifications/cancelled":
                params = message.get("params")
                self.owed.discard(_key(params.get("requestId")) if isinstance(params, dict) else None)
                self.settled.notify_all()

    def hand_on(self, message: dict[str, Any], *, start: bool) -> None:
        """Queue ``message`` for the SDK. The SDK starts loading at the first request the front cannot answer,
        or :data:`WARM_SECONDS` after the first message, so that a later first tool call finds it loaded."""
        if self.broken:
            return self._refuse(message)
        self.inbox.put(message)
        if start:
            self.start_sdk()
        elif self.sdk is None and self.timer is None:
            self.timer = threading.Timer(WARM_SECONDS, self.start_sdk)
            self.timer.daemon = True
            self.timer.start()
        return None

    def start_sdk(self, *, draining: bool = False) -> None:
        with self.lock:  # the timer's thread and the reader may both get here
            if self.sdk is None and (draining or not self.finishing):
                self.sdk = threading.Thread(target=self._run_sdk, name="gitive-mcp-sdk", daemon=True)
                self.sdk.start()

    def _run_sdk(self) -> None:
        try:
            from gitive.mcp.server import serve_queue

            serve_queue(self.repo, self.inbox, self.sent)
        except BaseException as exc:  # the SDK failed to load or crashed: say so to every caller
            self._fail(f"gitive mcp could not serve: {type(exc).__name__}: {str(exc)[:200]}")
            return
        if not self.finishing:
            self._fail("gitive mcp could not serve: its MCP server stopped before the client closed stdin")

    def _fail(self, reason: str) -> None:
        self.broken = reason
        print(reason, file=sys.stderr)
        self._refuse_all()

    def sent(self, message: dict[str, Any]) -> None:
        """A message from the SDK: a copy's answer is checked and dropped, anything else goes to the client."""
        ident = message.get("id")
        if "method" not in message and isinstance(ident, str) and ident in self.copies:
            mine = self.copies.pop(ident)
            if message.get("result") != mine:
                print(f"gitive mcp: the early answer differed from the SDK's ({json.dumps(message)[:300]})",
                      file=sys.stderr)
            return
        self.write(message)
        if "method" not in message:
            with self.settled:
                self.owed.discard(_key(ident))
                self.settled.notify_all()

    def write(self, message: dict[str, Any]) -> None:
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
        try:
            data = text.encode() + b"\n"
        except UnicodeEncodeError:  # a lone surrogate somewhere: only then walk the whole message to replace it
            data = json.dumps(clean(message), ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
        with self.lock:
            try:
                self.out.write(data)
                self.out.flush()
            except (BrokenPipeError, ValueError, OSError):
                pass  # the client has gone: nothing left to tell it

    def finish(self) -> None:
        """stdin closed: wait for the answers owed (bounded), then let the SDK stop. With nothing owed the SDK,
        perhaps still loading, is not waited for: the client waits for this process to exit (``claude -p``
        did, for the seconds the SDK took to import on a loaded machine: 3.7 s a session), and nothing it could
        still do is owed to anyone."""
        deadline = time.monotonic() + DRAIN_SECONDS
        self.finishing = True  # from here on the timer starts nothing
        if self.timer is not None:
            self.timer.cancel()
        if not self.owed:
            self.abandoned = self.sdk is not None and self.sdk.is_alive()
            if self.abandoned:
                return
        if self.owed:
            self.start_sdk(draining=True)
        with self.settled:
            while self.owed and not self.broken and (left := deadline - time.monotonic()) > 0:
                self.settled.wait(min(left, 1.0))
        if self.sdk is not None:
            self.inbox.put(None)  # the SDK server stops after the last message
            self.sdk.join(10.0)

    def _refuse(self, message: dict[str, Any]) -> None:
        if "method" in message and "id" in message and not str(message["id"]).startswith(PRIVATE):
            self.write(_error(message["id"], INTERNAL_ERROR, self.broken or "gitive mcp could not serve"))
            with self.settled:
                self.owed.discard(_key(message["id"]))
                self.settled.notify_all()

    def _refuse_all(self) -> None:
        while True:
            try:
                item = self.inbox.get_nowait()
            except queue.Empty:
                break
            if isinstance(item, dict):
                self._refuse(item)
        with self.settled:
            for ident in list(self.owed):
                self.write(_error(ident[1], INTERNAL_ERROR, self.broken or "gitive mcp could not serve"))
            self.owed.clear()
            self.settled.notify_all()


def _key(ident: Any) -> tuple[str, Any]:
    """A request id as a set member: 1 and "1" are different ids."""
    return (type(ident).__name__, ident)


def _error(ident: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}}


def _lines(stream: IO[bytes]) -> Any:
    """Lines of ``stream``; None for a line longer than :data:`MAX_LINE` (its rest is skipped)."""
    while line := stream.readline(MAX_LINE + 1):
        if len(line) > MAX_LINE and not line.endswith(b"\n"):
            while (rest := stream.readline(MAX_LINE)) and not rest.endswith(b"\n"):
                pass
            yield None
        else:
            yield line


def _claim_stdio() -> tuple[IO[bytes], IO[bytes]]:
    """Private handles on the client's pipes; fd 0 then reads the null device and fd 1 writes to stderr."""
    wire_in = os.fdopen(os.dup(0), "rb")
    wire_out = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    return wire_in, wire_out


def _stop_at_once(signum: int, frame: Any) -> None:
    """SIGINT or SIGTERM: the client is stopping this server. Exit now, without the interpreter's teardown of
    the SDK (which made Claude Code wait out its 100 ms before SIGTERM at the end of every session)."""
    sys.stderr.flush()
    os._exit(0)


def main(repo: Path | str | None = None) -> int:
    """Serve MCP over this process's stdin and stdout until the client closes stdin or stops it by a signal."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, _stop_at_once)
    wire_in, wire_out = _claim_stdio()
    front = Front(repo, wire_out)
    front.serve(wire_in)
    if front.abandoned:  # the SDK is still loading and nothing is owed: exit now, not after its import
        wire_out.flush()
        sys.stderr.flush()
        os._exit(0)
    return 0
