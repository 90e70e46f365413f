"""Asking the local daemon for items queued for a session, within a hard time budget (stdlib only).

A hook must never wait on a slow daemon: no socket, a refused connection, or no answer in time all mean
"nothing queued". The wire format is one JSON object per line.
"""

from __future__ import annotations

import json
import socket
import time
from typing import Any

from gitive.core.home import gitive_home

SOCKET = "daemon.sock"


def request(message: dict[str, Any], budget: float = 0.15) -> dict[str, Any] | None:
    """Send one request and read one reply line, or None when the daemon does not answer in ``budget``."""
    path = gitive_home() / SOCKET
    if not path.exists():
        return None
    deadline = time.monotonic() + budget
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(budget)
            sock.connect(str(path))
            sock.sendall(json.dumps(message).encode() + b"\n")
            buf = b""
            while not buf.endswith(b"\n"):
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                sock.settimeout(left)
                chunk = sock.recv(65536)
                if not chunk:
                    break
                buf += chunk
        reply = json.loads(buf)
        return reply if isinstance(reply, dict) else None
    except (OSError, ValueError):
        return None


def notify(message: dict[str, Any], budget: float = 0.05) -> bool:
    """Send one request without waiting for the reply (a confirmation must not add to a hook's wait)."""
    path = gitive_home() / SOCKET
    if not path.exists():
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(budget)
            sock.connect(str(path))
            sock.sendall(json.dumps(message).encode() + b"\n")
            sock.shutdown(socket.SHUT_WR)
        return True
    except OSError:
        return False
