"""Run a harness with no network but loopback: a network namespace of its own, holding only ``lo``.

``python testing/harness/netns.py --port P --unix S -- CMD…`` unshares the network namespace (as root
directly, otherwise inside a new user namespace that maps the caller to itself), brings ``lo`` up, listens on
127.0.0.1:P and relays every connection to the Unix socket S, where the scripted model server listens (a Unix
socket is a file: it is reachable from any network namespace). Then it runs CMD and exits with its code.

So the harness reaches its model at ``http://127.0.0.1:P`` and nothing else: a telemetry call, an update
check or a plugin sync fails at once with "network is unreachable" instead of leaving the machine. The
hooks and ``gitive mcp`` the harness starts inherit the namespace; they reach gitive's daemon through its Unix
socket and the team's remote through the file system, as before.

:func:`available` says whether this machine allows it; :func:`wrap` returns the command to run.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import fcntl
import functools
import os
import socket
import struct
import subprocess
import sys
import threading

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
SELF = os.path.abspath(__file__)  # run as a script: it needs only the standard library


def _unshare(flags: int) -> bool:
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.unshare(flags) == 0


def _write(path: str, text: str) -> None:
    with open(path, "w") as fh:
        fh.write(text)


def enter() -> None:
    """Move this process into a new network namespace (and user namespace if it must). Raises OSError."""
    if _unshare(CLONE_NEWNET):
        return
    uid, gid = os.getuid(), os.getgid()
    if not _unshare(CLONE_NEWUSER | CLONE_NEWNET):
        raise OSError(ctypes.get_errno(), "unshare(CLONE_NEWNET) is not allowed here")
    with contextlib.suppress(OSError):
        _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")


def loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        request = struct.pack("16sH14s", b"lo", 0, b"")
        flags = struct.unpack("16sH14s", fcntl.ioctl(s.fileno(), SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(s.fileno(), SIOCSIFFLAGS, struct.pack("16sH14s", b"lo", flags | IFF_UP, b""))


def _pipe(src: socket.socket, dst: socket.socket) -> None:
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_WR)


def _relay(conn: socket.socket, unix_path: str) -> None:
    upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        upstream.connect(unix_path)
    except OSError:
        conn.close()
        upstream.close()
        return
    back = threading.Thread(target=_pipe, args=(upstream, conn), daemon=True)
    back.start()
    _pipe(conn, upstream)
    back.join()
    conn.close()
    upstream.close()


def _serve(listener: socket.socket, unix_path: str) -> None:
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=_relay, args=(conn, unix_path), daemon=True).start()


@functools.cache
def available() -> bool:
    """Whether a network namespace can be made here (tried once, in a child process)."""
    try:
        return subprocess.run([sys.executable, SELF, "--probe"], capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def wrap(command: list[str], port: int, unix_path: str) -> list[str]:
    """``command`` run inside a namespace where 127.0.0.1:``port`` is the model server."""
    return [sys.executable, SELF, "--port", str(port), "--unix", unix_path, "--", *command]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="testing.harness.netns")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--unix", default="")
    parser.add_argument("--probe", action="store_true")
    parser.add_argument("command", nargs="*")
    args = parser.parse_args(argv)
    enter()
    loopback_up()
    if args.probe:
        with socket.socket() as s:
            s.settimeout(1)
            return 0 if s.connect_ex(("192.0.2.1", 80)) != 0 else 1  # TEST-NET-1 must be unreachable
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", args.port))
    listener.listen(64)
    threading.Thread(target=_serve, args=(listener, args.unix), daemon=True).start()
    try:
        return subprocess.run(args.command).returncode
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
