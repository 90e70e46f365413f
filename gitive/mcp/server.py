"""The SDK side of ``gitive mcp``: the official ``mcp`` SDK's server (2.x, low-level API) serving the tool table.

This is the only module that imports the SDK (about 0.7 s). ``gitive mcp`` starts in :mod:`gitive.mcp.front`,
which answers the handshake and the tool list from the table at once and then hands every message to
:func:`serve_queue` here, so the SDK, pygit2 and the index load while the client is already connected. Tool
calls run on worker threads, each opening its own repository and index connection; nothing is shared.
"""

from __future__ import annotations

import queue
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage

from gitive import __version__
from gitive.mcp import calls
from gitive.mcp.instructions import INSTRUCTIONS
from gitive.mcp.table import BY_NAME, TOOLS


def build(repo: Path | str | None = None) -> Server[Any]:
    """The server, its tools bound to the repository at ``repo`` (None: the working directory)."""
    listed = types.ListToolsResult(tools=[types.Tool.model_validate(t.wire()) for t in TOOLS])

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return listed

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        tool = BY_NAME.get(params.name)
        if tool is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"no tool {params.name[:80]!r}; tools/list names them")
        answer = await anyio.to_thread.run_sync(calls.run, tool, repo, params.arguments)
        return types.CallToolResult(content=[types.TextContent(type="text", text=answer.text)],
                                    structured_content=answer.data, is_error=answer.is_error)

    return Server("gitive", version=__version__, instructions=INSTRUCTIONS, on_list_tools=list_tools,
                  on_call_tool=call_tool)


def serve_queue(repo: Path | str | None, inbox: queue.Queue[Any], send: Callable[[dict[str, Any]], None]) -> None:
    """Serve the parsed JSON-RPC messages taken from ``inbox`` (until a None), passing each message the server
    sends, as a dict, to ``send``; returns when the server has answered and stopped."""
    anyio.run(_serve, repo, inbox, send)


async def _serve(repo: Path | str | None, inbox: queue.Queue[Any], send: Callable[[dict[str, Any]], None]) -> None:
    server = build(repo)
    into, read = anyio.create_memory_object_stream[SessionMessage | Exception](16)
    write, out = anyio.create_memory_object_stream[SessionMessage](16)
    stop = threading.Event()
    threading.Thread(target=_warm, args=(repo, stop), name="gitive-mcp-index", daemon=True).start()
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_pump_in, inbox, into, send)
            tg.start_soon(_pump_out, out, send)
            await server.run(read, write, server.create_initialization_options())
    finally:
        stop.set()


async def _pump_in(inbox: queue.Queue[Any], into: Any, send: Callable[[dict[str, Any]], None]) -> None:
    async with into:
        while (item := await anyio.to_thread.run_sync(inbox.get)) is not None:
            try:
                message = types.jsonrpc_message_adapter.validate_python(item, by_name=False)
            except ValueError as exc:
                _refuse(item, exc, send)
                continue
            await into.send(SessionMessage(message))


async def _pump_out(out: Any, send: Callable[[dict[str, Any]], None]) -> None:
    async with out:
        async for item in out:
            send(item.message.model_dump(by_alias=True, mode="json", exclude_unset=True))


def _refuse(item: Any, exc: ValueError, send: Callable[[dict[str, Any]], None]) -> None:
    """A message that is JSON but not JSON-RPC: an answer when it has an id (the SDK would drop it)."""
    ident = item.get("id") if isinstance(item, dict) else None
    if isinstance(ident, str | int) and not isinstance(ident, bool) and "method" in item:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        send({"jsonrpc": "2.0", "id": ident, "error": {"code": types.INVALID_REQUEST,
                                                       "message": f"not a valid JSON-RPC request ({first[:120]})"}})


def _warm(repo: Path | str | None, stop: threading.Event) -> None:
    """Say on stderr (the harness's MCP log) when the repository is not a gitive hive (tool calls give the same
    reason); else bring the index up to date and hold it open until ``stop`` (see ``index_kept_open``), so the
    first call finds it migrated and pygit2 loaded, and hold this machine's daemon database open the same way:
    without it, each mail or claim call closed the last connection to ``daemon.sqlite``, and SQLite then
    checkpointed and deleted its write-ahead log, two disk syncs a call."""
    from gitive.daemon import db as daemon_db
    from gitive.errors import GitiveError
    from gitive.mcp.memory import index_kept_open
    from gitive.team.hive import open_hive

    try:
        open_hive(repo)
    except GitiveError as exc:
        print(f"gitive mcp: {exc}", file=sys.stderr)
        return
    with index_kept_open(repo), daemon_db.connect() as held:
        held.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()  # open the log and shared memory
        stop.wait()
