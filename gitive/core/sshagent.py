"""A minimal ssh-agent client (the agent protocol over ``SSH_AUTH_SOCK``), for ed25519 person keys.

Only two requests are needed: list identities and sign. An ed25519 signature from the agent is a plain
Ed25519 signature over the data, so readers check it like any other. A key added with ``ssh-add -c`` makes
the agent ask the person (its ``SSH_ASKPASS`` dialog) before every signature: that click is the gesture.
Protocol: draft-miller-ssh-agent (message numbers 11-14, failure 5).
"""

from __future__ import annotations

import os
import socket
import struct
from typing import NamedTuple

from gitive.errors import GitiveError

_REQUEST_IDENTITIES = 11
_IDENTITIES_ANSWER = 12
_SIGN_REQUEST = 13
_SIGN_RESPONSE = 14
_FAILURE = 5
_ED25519 = b"ssh-ed25519"
_TIMEOUT = 120.0  # the agent may be waiting for the person to click its confirmation dialog


class AgentError(GitiveError):
    pass


class Identity(NamedTuple):
    public: str  # ed25519 public key, hex
    comment: str


def _string(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def _take(buf: bytes, at: int) -> tuple[bytes, int]:
    if at + 4 > len(buf):
        raise AgentError("ssh-agent sent a truncated reply")
    (n,) = struct.unpack_from(">I", buf, at)
    if at + 4 + n > len(buf):
        raise AgentError("ssh-agent sent a truncated reply")
    return buf[at + 4:at + 4 + n], at + 4 + n


def key_blob(public_hex: str) -> bytes:
    return _string(_ED25519) + _string(bytes.fromhex(public_hex))


def _socket_path(path: str | None) -> str:
    found = path or os.environ.get("SSH_AUTH_SOCK")
    if not found:
        raise AgentError("no ssh-agent: SSH_AUTH_SOCK is not set (start one with `eval $(ssh-agent)`)")
    return found


def _exchange(path: str | None, message: bytes) -> bytes:
    where = _socket_path(path)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(_TIMEOUT)
            sock.connect(where)
            sock.sendall(_string(message))
            head = _recv(sock, 4)
            (n,) = struct.unpack(">I", head)
            if n > 256 * 1024:
                raise AgentError("ssh-agent sent an oversized reply")
            return _recv(sock, n)
    except OSError as exc:
        raise AgentError(f"cannot talk to ssh-agent at {where}: {exc.strerror or exc}") from None


def _recv(sock: socket.socket, n: int) -> bytes:
    out = bytearray()
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise AgentError("ssh-agent closed the connection")
        out += chunk
    return bytes(out)


def identities(path: str | None = None) -> list[Identity]:
    """The ed25519 keys the agent holds (other key types are skipped)."""
    reply = _exchange(path, bytes([_REQUEST_IDENTITIES]))
    if not reply or reply[0] != _IDENTITIES_ANSWER:
        raise AgentError("ssh-agent refused to list its keys")
    (count,) = struct.unpack_from(">I", reply, 1)
    at, out = 5, []
    for _ in range(min(count, 1024)):
        blob, at = _take(reply, at)
        comment, at = _take(reply, at)
        kind, rest = _take(blob, 0)
        if kind == _ED25519:
            public, _ = _take(blob, rest)
            if len(public) == 32:
                out.append(Identity(public.hex(), comment.decode("utf-8", "replace")))
    return out


def sign(public_hex: str, data: bytes, path: str | None = None) -> bytes:
    """Ask the agent to sign ``data`` with the ed25519 key ``public_hex``; return the 64-byte signature.

    Raises:
        AgentError: no agent, the key is not in it, or the person declined the confirmation.
    """
    reply = _exchange(path, bytes([_SIGN_REQUEST]) + _string(key_blob(public_hex)) + _string(data)
                      + struct.pack(">I", 0))
    if not reply or reply[0] == _FAILURE:
        raise AgentError("ssh-agent did not sign: the key is not loaded (`ssh-add -c KEY`), or the "
                         "confirmation was declined")
    if reply[0] != _SIGN_RESPONSE:
        raise AgentError("ssh-agent sent an unexpected reply")
    blob, _ = _take(reply, 1)
    kind, at = _take(blob, 0)
    sig, _ = _take(blob, at)
    if kind != _ED25519 or len(sig) != 64:
        raise AgentError("ssh-agent returned a signature that is not ed25519")
    return sig
