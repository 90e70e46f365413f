"""Signed pushes: the anchor signs its push certificate with its machine key, and the server guard checks it.

git's own mechanism (``git push --signed``, git >= 2.2; SSH signatures, git >= 2.34): the client signs a
certificate naming the remote's one-time nonce and every ``<old> <new> <ref>`` it pushes, and ``pre-receive``
sees ``GIT_PUSH_CERT`` (the certificate's blob), ``GIT_PUSH_CERT_STATUS`` (``G``: a good signature by a key the
server's ``gpg.ssh.allowedSignersFile`` lists), ``GIT_PUSH_CERT_KEY`` (its fingerprint) and
``GIT_PUSH_CERT_NONCE_STATUS`` (``OK``: the nonce this very session issued, so a certificate cannot be replayed).
The server needs ``receive.certNonceSeed``; ``gitive server install-hook --anchor`` sets it and writes the
anchors' public keys to an allowed-signers file beside the hook.

The machine key is ed25519, so it is written as an OpenSSH private key for ``ssh-keygen -Y sign`` (which git
runs) only while a push runs, 0600 in ``$GITIVE_HOME``, and removed afterwards.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import os
import secrets
import struct
from collections.abc import Iterator, Mapping
from pathlib import Path

from nacl.signing import SigningKey

ALLOWED_SIGNERS = "gitive-anchors.allowed_signers"
_KEY_TYPE = b"ssh-ed25519"


def _string(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


def public_blob(machine: str) -> bytes:
    """The SSH wire form of the ed25519 public key ``machine`` (64 hex)."""
    return _string(_KEY_TYPE) + _string(bytes.fromhex(machine))


def public_line(machine: str) -> str:
    """An ``allowed_signers`` line for ``machine``, valid for git's namespace only."""
    return f'anchor-{machine[:12]}@gitive.invalid namespaces="git" ssh-ed25519 ' \
           f"{base64.b64encode(public_blob(machine)).decode()}"


def fingerprint(machine: str) -> str:
    """``SHA256:…`` as ``ssh-keygen -l`` (and git's ``GIT_PUSH_CERT_KEY``) print it."""
    digest = hashlib.sha256(public_blob(machine)).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


def openssh_private(key: SigningKey) -> bytes:
    """``key`` as an unencrypted ``openssh-key-v1`` private key file (PEM armour)."""
    seed, public = bytes(key), bytes(key.verify_key)
    check = secrets.token_bytes(4)
    private = check + check + _string(_KEY_TYPE) + _string(public) + _string(seed + public) + _string(b"gitive")
    private += bytes(range(1, 1 + (-len(private)) % 8))
    body = (b"openssh-key-v1\0" + _string(b"none") + _string(b"none") + _string(b"") + struct.pack(">I", 1)
            + _string(public_blob(public.hex())) + _string(private))
    text = base64.b64encode(body).decode()
    lines = [text[i:i + 70] for i in range(0, len(text), 70)]
    return ("-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END OPENSSH PRIVATE KEY-----\n"
            ).encode()


@contextlib.contextmanager
def signing_config(key: SigningKey, folder: Path) -> Iterator[list[str]]:
    """git's ``-c`` arguments that sign a push certificate with ``key``; the key file lives only meanwhile."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = folder / f".push-key-{os.getpid()}-{secrets.token_hex(4)}"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(openssh_private(key))
        yield ["-c", "gpg.format=ssh", "-c", f"user.signingKey={path}"]
    finally:
        path.unlink(missing_ok=True)


def certified(env: Mapping[str, str], cert_text: str | None, anchors: list[str], update: tuple[str, str, str]
              ) -> str | None:
    """Why the push is not certified by an anchor for ``update`` (``old new ref``), or None when it is.

    ``cert_text`` is the certificate blob's text (``GIT_PUSH_CERT``), None when the push carried none.
    """
    if cert_text is None:
        return "the push carries no signed push certificate (only the anchor's signed landing may)"
    if env.get("GIT_PUSH_CERT_STATUS") != "G":
        return f"its push certificate's signature is not good (status {env.get('GIT_PUSH_CERT_STATUS', '?')})"
    if env.get("GIT_PUSH_CERT_NONCE_STATUS") != "OK":
        return "its push certificate was not made for this push (a replayed or stale nonce)"
    if env.get("GIT_PUSH_CERT_KEY") not in {fingerprint(a) for a in anchors}:
        return "its push certificate is not signed by the team's anchor"
    head, _, _ = cert_text.partition("-----BEGIN")
    if " ".join(update) not in head.splitlines():
        return "its push certificate does not name this ref update"
    return None
