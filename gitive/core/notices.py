"""One-line notices for the person at the terminal, raised by library code that does not print.

The index says when this machine was removed, or when the team still waits for person keys; the CLI listens
and prints each distinct line once per process on stderr. Other callers (the daemon, the MCP server) do not
listen, so nothing is printed into a protocol stream.
"""

from __future__ import annotations

from collections.abc import Callable

_sinks: list[Callable[[str], None]] = []


def listen(sink: Callable[[str], None]) -> None:
    if sink not in _sinks:
        _sinks.append(sink)


def listening() -> bool:
    return bool(_sinks)


def emit(line: str) -> None:
    for sink in _sinks:
        sink(line)
