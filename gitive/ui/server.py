"""Running the dashboard: bring the index up to date once, bind 127.0.0.1, make this run's token, serve."""

from __future__ import annotations

import errno
import secrets
import socket
import webbrowser
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from gitive.errors import GitiveError
from gitive.index.refresh import fresh_index
from gitive.team.hive import open_hive

HOST = "127.0.0.1"  # loopback only, whatever the caller asks: the dashboard is for the person at this machine


class Address(NamedTuple):
    url: str
    port: int
    token: str


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1 (``port`` 0: a free one).

    Raises:
        GitiveError: the port is taken or not ours to bind.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        sock.close()
        why = "is in use" if exc.errno == errno.EADDRINUSE else f"cannot be bound ({exc.strerror})"
        raise GitiveError(f"port {port} on {HOST} {why}; pick another with --port, or leave it out for a free one") \
            from None
    sock.listen(64)
    sock.set_inheritable(True)
    return sock


def serve(repo: Path, port: int = 0, *, open_browser: bool = False,
          ready: Callable[[Address], None] = lambda address: None) -> int:
    """Serve the dashboard for the hive of ``repo`` until interrupted; call ``ready`` once it listens.

    Raises:
        NotARepository, NoTeam: ``repo`` is not a team's repository.
        GitiveError: the port cannot be bound.
    """
    import uvicorn

    from gitive.ui.app import build

    hive = open_hive(repo)
    with fresh_index(hive):  # like every reader command: the projection catches up once, before serving
        pass
    root = Path(hive.project.workdir or hive.project.path)
    sock = bind(port)
    port = sock.getsockname()[1]
    token = secrets.token_urlsafe(24)
    address = Address(f"http://{HOST}:{port}/?token={token}", port, token)
    config = uvicorn.Config(build(root, token, port), log_level="warning", access_log=False, lifespan="on",
                            timeout_graceful_shutdown=2, server_header=False)
    server = uvicorn.Server(config)
    ready(address)
    if open_browser:
        webbrowser.open(address.url)
    server.run(sockets=[sock])
    return 0
