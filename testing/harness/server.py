"""A scripted model API on 127.0.0.1 that records every request a harness sends to its model.

One :class:`ModelServer` speaks all three protocols the harnesses use, told apart by path:

- Anthropic Messages (``POST /v1/messages``, SSE when ``stream`` is set; ``/v1/messages/count_tokens``):
  Claude Code;
- OpenAI Responses (``POST …/responses``, SSE): Codex;
- Gemini (``POST …/models/<m>:generateContent`` and ``:streamGenerateContent?alt=sse``; ``:countTokens``):
  Gemini CLI.

Every request, answered or not, is kept in :attr:`ModelServer.requests` with its decoded JSON body, so a test
asserts on what the model received. The replies come from a :class:`~testing.harness.script.Script`. It
listens on TCP (``url``) and on a Unix socket (``unix_path``), which a harness run inside a network namespace
of its own reaches through a relay (:mod:`testing.harness.netns`).
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import socketserver
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from testing.harness import protocols
from testing.harness.script import Script, say


@dataclass
class Request:
    """One request as the server received it."""

    protocol: str  # "anthropic", "openai", "gemini" or "other"
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any  # the decoded JSON body, or None
    raw: bytes
    at: float  # time.monotonic() when it arrived
    status: int = 0

    @property
    def kind(self) -> str:
        """What the request is for: ``turn`` (the model is asked to answer), ``count`` (token counting) or
        ``other``."""
        return protocols.kind(self)


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    chunks: Iterable[bytes]
    stream: bool = False


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "gitive-scripted-model/1"
    model: ModelServer  # set on the subclass each server makes

    def log_message(self, format: str, *args: Any) -> None:
        pass  # requests are recorded, not logged

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = bytearray()
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return bytes(data)
                data += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _handle(self) -> None:
        raw = self._body()
        if self.headers.get("Content-Encoding", "").lower() == "gzip":
            raw = gzip.decompress(raw)
        split = urlsplit(self.path)
        try:
            body = json.loads(raw) if raw.strip() else None
        except ValueError:
            body = None
        request = Request(protocols.protocol_of(self.command, split.path), self.command, split.path,
                          parse_qs(split.query), {k.lower(): v for k, v in self.headers.items()}, body, raw,
                          time.monotonic())
        reply = self.model.answer(request)
        request.status = reply.status
        self.model.record(request)
        self._send(reply)

    def _send(self, reply: Reply) -> None:
        self.send_response(reply.status)
        for key, value in reply.headers.items():
            self.send_header(key, value)
        if reply.stream:
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for chunk in reply.chunks:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
        else:
            data = b"".join(reply.chunks)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        self.wfile.flush()

    def do_POST(self) -> None:
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self._handle()

    do_GET = do_POST
    do_PUT = do_POST
    do_DELETE = do_POST
    do_HEAD = do_POST


class _TCP(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


class _Unix(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


@dataclass
class ModelServer:
    """The scripted model: start it with :func:`serving`; set :attr:`script` before each run."""

    script: Script = field(default_factory=lambda: say("ok"))
    requests: list[Request] = field(default_factory=list)
    url: str = ""
    unix_path: str = ""
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, request: Request) -> Reply:
        with self._lock:
            script = self.script
        return protocols.reply(request, script)

    def record(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def turns(self, protocol: str | None = None) -> list[Request]:
        """The requests that asked the model for an answer, in order (``protocol`` to pick one API)."""
        with self._lock:
            found = list(self.requests)
        return [r for r in found if r.kind == "turn" and (protocol is None or r.protocol == protocol)]

    def agent_turns(self, protocol: str | None = None) -> list[Request]:
        """The turns of the agent loop itself: those that offer the model tools (titles and summaries don't)."""
        return [r for r in self.turns(protocol) if protocols.view(r).tools]

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1])


@contextlib.contextmanager
def serving(script: Script | None = None) -> Iterator[ModelServer]:
    """A :class:`ModelServer` on 127.0.0.1 (an ephemeral port) and on a Unix socket, until the block ends."""
    model = ModelServer(script or say("ok"))
    handler = type("Handler", (_Handler,), {"model": model})
    folder = Path(tempfile.mkdtemp(prefix="gm-", dir="/tmp"))  # short: AF_UNIX paths hold 108 bytes
    tcp = _TCP(("127.0.0.1", 0), handler)
    unix = _Unix(str(folder / "model.sock"), handler)
    model.url = f"http://127.0.0.1:{tcp.server_address[1]}"
    model.unix_path = str(folder / "model.sock")
    threads = [threading.Thread(target=s.serve_forever, name=f"model-{n}", daemon=True)
               for n, s in (("tcp", tcp), ("unix", unix))]
    for t in threads:
        t.start()
    try:
        yield model
    finally:
        for s in (tcp, unix):
            s.shutdown()
            s.server_close()
        with contextlib.suppress(OSError):
            os.unlink(model.unix_path)
            folder.rmdir()
