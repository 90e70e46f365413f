"""What the environment did, said in one line: a full disk, a read-only ``.git``, instead of "internal error".

SQLite and git report a full disk or a read-only file system in their own words ("database or disk is full",
"disk I/O error", "attempt to write a readonly database", "unable to open database file", "No space left on
device", "Read-only file system"). Nothing gitive writes is half done when that happens: a SQLite transaction
rolls back, and a ref moves last, by compare-and-swap. So the line says where, and that nothing was written.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

_FULL_WORDS = ("database or disk is full", "no space left on device", "disk quota exceeded")
_READONLY_WORDS = ("readonly database", "read-only file system", "unable to open database file",
                   "permission denied")
_LOW_SPACE = 256 * 1024  # bytes free under which a disk I/O error is taken for a full disk


def _candidates(exc: BaseException) -> list[Path]:
    """Where gitive was writing: the file the error names, this repository's git dir, GITIVE_HOME."""
    from gitive.core.home import gitive_home
    from gitive.store.gitdir import find

    out = []
    named = getattr(exc, "filename", None)
    if isinstance(named, (str, bytes, os.PathLike)):
        out.append(Path(os.fsdecode(named)))
    found = find(os.getcwd())
    if found is not None:
        out.append(found.common_dir)
    out.append(gitive_home())
    return out


def _nearest_dir(path: Path) -> Path:
    while not path.is_dir() and path != path.parent:
        path = path.parent
    return path


def _full(path: Path) -> bool:
    try:
        st = os.statvfs(_nearest_dir(path))
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < _LOW_SPACE


def _read_only(path: Path) -> bool:
    folder = _nearest_dir(path)
    return folder.exists() and not os.access(folder, os.W_OK)


def explain(exc: BaseException) -> str | None:
    """One line for a failure of the disk or the file system, or None when ``exc`` is not one."""
    text = str(exc).lower()
    code = getattr(exc, "errno", None)
    if not isinstance(exc, (OSError, sqlite3.Error)) and not any(w in text for w in _FULL_WORDS + _READONLY_WORDS):
        return None
    places = _candidates(exc)
    if code in (errno.ENOSPC, errno.EDQUOT) or any(w in text for w in _FULL_WORDS) or "disk i/o error" in text:
        full = next((p for p in places if _full(p)), None)
        if full is not None or code in (errno.ENOSPC, errno.EDQUOT) or any(w in text for w in _FULL_WORDS):
            return f"disk full at {_nearest_dir(full or places[0])}; nothing was written"
    if code in (errno.EROFS, errno.EACCES, errno.EPERM) or any(w in text for w in _READONLY_WORDS):
        ro = next((p for p in places if _read_only(p)), None)
        if ro is not None:
            return f"{_nearest_dir(ro)} is read-only; nothing was written"
    return None
