"""What ``gitive install`` did, so ``gitive uninstall`` can undo exactly that: ``<git-dir>/gitive/install.json``.

For every file it wrote, the record keeps the bytes the file had before (``before``, base64; null when the
file did not exist), the sha256 of what install wrote, and the directories it had to create. Writes are
atomic (a temporary file in the same directory, then ``os.replace``).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from gitive.errors import GitiveError

STATE_FILE = "install.json"
VERSION = 1


def state_path(git_dir: Path) -> Path:
    return git_dir / "gitive" / STATE_FILE


def load(git_dir: Path) -> dict[str, Any]:
    """The recorded state (an empty one if nothing was installed).

    Raises:
        GitiveError: the state file exists but cannot be read.
    """
    path = state_path(git_dir)
    try:
        value = json.loads(path.read_text())
    except FileNotFoundError:
        return {"version": VERSION, "files": {}}
    except (OSError, ValueError) as exc:
        raise GitiveError(f"{path} is unreadable ({exc}); move it away to start over "
                          "(installed files are then left as they are)") from None
    value.setdefault("files", {})
    return value


def save(git_dir: Path, state: dict[str, Any]) -> None:
    """Write the state atomically; remove the file (and an empty ``gitive`` dir) when nothing is installed."""
    path = state_path(git_dir)
    if not state.get("files") and not state.get("git_hooks"):
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        with contextlib.suppress(OSError):
            path.parent.rmdir()  # only if empty: the index and other state live there too
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, (json.dumps(state, indent=2, sort_keys=True) + "\n").encode())


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def encode(data: bytes | None) -> str | None:
    return None if data is None else base64.b64encode(data).decode()


def decode(text: str | None) -> bytes | None:
    return None if text is None else base64.b64decode(text)


def read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None


def write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` in one step, keeping an existing file's permission bits."""
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    tmp = path.with_name(f".{path.name}.gitive-{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is not None:
            tmp.chmod(mode)
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
