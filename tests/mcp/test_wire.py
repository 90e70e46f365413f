"""The front's early answers are the SDK's: for every protocol version and both eras, the answer the front gives
before the SDK has loaded equals what the SDK server itself answers to the same message sequence."""

from __future__ import annotations

import queue
import threading
from pathlib import Path
from typing import Any

import pytest
from mcp_types import version as sdk_versions

from gitive.mcp import server, wire

CLIENT = {"name": "claude-code", "version": "2.1.0", "title": "Claude Code"}
ENVELOPE = {wire.VERSION_KEY: "2026-07-28", wire.CLIENT_KEY: CLIENT, wire.CAPABILITIES_KEY: {}}


def _initialize(version: str, **extra: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": version, "capabilities": {"roots": {"listChanged": True}, "elicitation": {}},
        "clientInfo": CLIENT, **extra}}


def _sdk(messages: list[dict[str, Any]], repo: Path) -> dict[Any, dict[str, Any]]:
    """What the SDK server answers to ``messages``, by request id."""
    inbox: queue.Queue[Any] = queue.Queue()
    answers: dict[Any, dict[str, Any]] = {}
    done = threading.Event()
    waiting = {m["id"] for m in messages if "id" in m}

    def send(message: dict[str, Any]) -> None:
        answers[message.get("id")] = message
        if waiting <= set(answers):
            done.set()

    for message in messages:
        inbox.put(message)
    worker = threading.Thread(target=server.serve_queue, args=(repo, inbox, send), daemon=True)
    worker.start()
    assert done.wait(60), answers
    inbox.put(None)
    worker.join(30)
    return answers


def _front(messages: list[dict[str, Any]]) -> dict[Any, dict[str, Any] | None]:
    early = wire.Early()
    return {m["id"]: early.answer(m) for m in messages if "id" in m}


HANDSHAKE = [[{"jsonrpc": "2.0", "id": "p", "method": "ping"}, _initialize(v),
              {"jsonrpc": "2.0", "method": "notifications/initialized"}, {"jsonrpc": "2.0", "id": "q", "method": "ping"},
              {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
              {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {"_meta": {"progressToken": 7}}}]
             for v in (*wire.HANDSHAKE_VERSIONS, "2026-07-28", "1999-01-01")]
MODERN = [[{"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": ENVELOPE}},
           {"jsonrpc": "2.0", "id": "two", "method": "tools/list", "params": {"_meta": ENVELOPE}}]]


@pytest.mark.parametrize("messages", HANDSHAKE + MODERN, ids=lambda m: str(m[1]["params"].get("protocolVersion")
                                                                                   if len(m) > 2 else "modern"))
def test_every_early_answer_is_the_sdks(messages: list[dict[str, Any]], tmp_path: Path) -> None:
    mine, theirs = _front(messages), _sdk(messages, tmp_path)
    assert all(answer is not None for answer in mine.values()), mine
    for ident, answer in mine.items():
        assert theirs[ident].get("result") == answer, ident


ODD = [
    [_initialize("2025-06-18", capabilities=5)],  # the SDK refuses these params: the front must not answer
    [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}],
    [{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}],  # before initialize
    [_initialize("2025-06-18"), {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": "x"}}],
    [_initialize("2025-06-18"), {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": ENVELOPE}}],
    [{"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": {**ENVELOPE, wire.VERSION_KEY:
                                                                                    "2027-01-01"}}}],
    [{"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": ENVELOPE}},
     {"jsonrpc": "2.0", "id": 2, "method": "initialize", "params": _initialize("2025-06-18")["params"]}],
]


@pytest.mark.parametrize("messages", ODD, ids=range(len(ODD)))
def test_the_front_leaves_what_it_is_unsure_of_to_the_sdk(messages: list[dict[str, Any]], tmp_path: Path) -> None:
    mine, theirs = _front(messages), _sdk(messages, tmp_path)
    last = messages[-1]["id"]
    assert mine[last] is None
    assert theirs[last]  # the SDK answers it (often with an error)
    for ident, answer in mine.items():
        if answer is not None:
            assert theirs[ident].get("result") == answer


def test_the_front_speaks_the_sdks_versions() -> None:
    assert wire.HANDSHAKE_VERSIONS == sdk_versions.HANDSHAKE_PROTOCOL_VERSIONS
    assert wire.MODERN_VERSIONS == sdk_versions.MODERN_PROTOCOL_VERSIONS
