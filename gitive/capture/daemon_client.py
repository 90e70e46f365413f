"""Asking the local daemon for items queued for a session, within a hard time budget (stdlib only).

A hook must never wait on a slow daemon: no socket, a refused connection, a stopped daemon, or no answer in
time all mean "nothing queued". The wire format is one JSON object per line. ``socket`` is imported only
when ``daemon.sock`` exists (and ``json`` when a message goes out): a machine without a daemon does not pay
for them.
"""

from __future__ import annotations

import time

from gitive.core.home import gitive_home

# typing costs each hook process about 5 ms to import; with postponed annotations it is needed only by checkers
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from gitive.capture.deadline import Deadline

SOCKET = "daemon.sock"


def _within(budget: float, deadline: Deadline | None) -> float:
    return budget if deadline is None else min(budget, deadline.left())


class Call:
    """A request sent and not yet answered: the daemon works on it while the caller does its own work."""

    __slots__ = ("end", "sock")

    def __init__(self, sock: Any, end: float) -> None:
        self.sock, self.end = sock, end


def ask(message: dict[str, Any], budget: float = 0.15, deadline: Deadline | None = None) -> Call | None:
    """Connect and send one request now; :func:`answer` reads its reply later (None: no daemon, or it did not
    take the request in time). Connecting, sending and the later reading share ``budget`` seconds, never past
    ``deadline``."""
    path = gitive_home() / SOCKET
    budget = _within(budget, deadline)
    if budget <= 0 or not path.exists():
        return None
    import json
    import socket

    end = time.monotonic() + budget
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(budget)
        sock.connect(str(path))
        _send(sock, json.dumps(message).encode() + b"\n", end)
    except OSError:
        sock.close()
        return None
    return Call(sock, end)


def answer(call: Call | None, deadline: Deadline | None = None) -> dict[str, Any] | None:
    """The reply line to ``call``, or None when it does not come within the call's budget (or ``deadline``).

    The connection is closed either way: a daemon that answers later finds nobody and puts handed-out items
    back in the queue.
    """
    if call is None:
        return None
    end = call.end if deadline is None else min(call.end, time.monotonic() + max(0.0, deadline.left()))
    try:
        with call.sock as sock:
            buf = b""
            while not buf.endswith(b"\n"):
                left = end - time.monotonic()
                if left <= 0:
                    return None
                sock.settimeout(left)
                chunk = sock.recv(65536)
                if not chunk:
                    break
                buf += chunk
        import json

        reply = json.loads(buf)
        return reply if isinstance(reply, dict) else None
    except (OSError, ValueError):
        return None


def request(message: dict[str, Any], budget: float = 0.15, deadline: Deadline | None = None
            ) -> dict[str, Any] | None:
    """Send one request and read one reply line, or None when the daemon does not answer in time.

    Connecting, sending and reading share one budget: ``budget`` seconds, and never past ``deadline``.
    """
    return answer(ask(message, budget, deadline), deadline)


def notify(message: dict[str, Any], budget: float = 0.05, deadline: Deadline | None = None) -> bool:
    """Send one request without waiting for the reply (a confirmation must not add to a hook's wait)."""
    path = gitive_home() / SOCKET
    budget = _within(budget, deadline)
    if budget <= 0 or not path.exists():
        return False
    import json
    import socket

    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(budget)
            sock.connect(str(path))
            _send(sock, json.dumps(message).encode() + b"\n", time.monotonic() + budget)
            sock.shutdown(socket.SHUT_WR)
        return True
    except OSError:
        return False


def _send(sock: Any, data: bytes, end: float) -> None:
    """``sendall`` against the shared end time (a stopped daemon's full buffer must not stretch it)."""
    view = memoryview(data)
    while view:
        left = end - time.monotonic()
        if left <= 0:
            raise TimeoutError("the daemon does not read")
        sock.settimeout(left)
        view = view[sock.send(view):]
