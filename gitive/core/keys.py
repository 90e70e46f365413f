"""The machine key: one ed25519 key per ``$GITIVE_HOME``; its public half is the machine id."""

from __future__ import annotations

import os
import secrets
import stat
import threading
from functools import lru_cache
from pathlib import Path

from nacl.exceptions import BadSignatureError
from nacl.signing import SigningKey, VerifyKey

from gitive.core.home import ensure_home, gitive_home
from gitive.core.ids import MachineId
from gitive.errors import KeyFileError

KEY_FILE = "machine.key"


def key_path() -> Path:
    return gitive_home() / KEY_FILE


def _check_permissions(path: Path) -> None:
    mode = path.stat().st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise KeyFileError(
            f"{path} is readable by other users (mode {stat.S_IMODE(mode):o}); "
            f"run `chmod 600 {path}` and try again"
        )


def load_key(path: Path | None = None) -> SigningKey:
    """Read the machine key.

    Raises:
        KeyFileError: the file is missing, malformed, or readable by group or others.
    """
    path = path or key_path()
    if not path.exists():
        raise KeyFileError(f"no machine key at {path}; run `gitive init` or `gitive join` first")
    _check_permissions(path)
    try:
        seed = bytes.fromhex(path.read_text(encoding="ascii").strip())
    except (ValueError, UnicodeDecodeError):
        seed = b""
    if len(seed) != 32:
        raise KeyFileError(f"{path} is not a gitive machine key (expected 64 hex characters)")
    return SigningKey(seed)


def load_or_create_key(path: Path | None = None) -> tuple[SigningKey, bool]:
    """Return the machine key, creating it (mode 0600, atomically) if absent; the flag says it was created."""
    path = path or key_path()
    if path.exists():
        return load_key(path), False
    ensure_home()
    key = SigningKey.generate()
    # Unique per process and thread: MCP tools run on worker threads of one process.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(key.encode().hex() + "\n")
    try:
        os.link(tmp, path)  # fails if another process created the key meanwhile: theirs wins
        created = True
    except FileExistsError:
        created = False
    finally:
        tmp.unlink()
    return load_key(path), created


def machine_id(key: SigningKey) -> MachineId:
    return MachineId(key.verify_key.encode().hex())


@lru_cache(maxsize=4096)
def verify_key(machine: str) -> VerifyKey:
    return VerifyKey(bytes.fromhex(machine))


def verify(machine: str, message: bytes, sig_hex: str) -> bool:
    """True when ``sig_hex`` is ``machine``'s signature over ``message``; never raises on bad input."""
    try:
        verify_key(machine).verify(message, bytes.fromhex(sig_hex))
    except (BadSignatureError, ValueError, TypeError):
        return False
    return True
