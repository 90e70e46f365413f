"""Writing a :class:`~gitive.install.base.Target` and undoing it exactly.

Install is planned before anything is written (so an unreadable file stops it with nothing changed), then
applied; each file gets a record (see :mod:`gitive.install.state`). Uninstall restores the original bytes
when the file is exactly as install left it (deleting it, and the directories install created, if it did
not exist), and otherwise removes only our entries, keeping the user's later edits.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any, NamedTuple

from gitive.install import state as st
from gitive.install.base import Target


class Planned(NamedTuple):
    target: Target
    path: Path
    current: bytes | None
    new: bytes
    record: dict[str, Any]  # what the state will hold for this file once ``new`` is written


def plan(target: Target, path: Path, root: Path, record: dict[str, Any] | None) -> Planned:
    """What installing ``target`` at ``path`` would write; ``record`` is the previous install's, if any.

    Raises:
        GitiveError: the current file cannot be read as its format (nothing is written).
    """
    current = st.read_bytes(path)
    new = target.add(current)
    if record is not None and current is not None and st.sha256(current) == record["sha256"]:
        before, dirs = record["before"], record["created_dirs"]  # untouched since: keep the true original
    elif record is not None:
        # Edited (or deleted) since the last install: the user's version, minus ours, is the new original.
        kept = None if current is None else target.remove(current)
        before = None if kept is None or (kept[1] and record["before"] is None) else st.encode(kept[0])
        dirs = _missing_dirs(path, root) or record["created_dirs"]
    else:
        before, dirs = st.encode(current), _missing_dirs(path, root)
    return Planned(target, path, current, new,
                   {"owner": target.owner, "before": before, "sha256": st.sha256(new), "created_dirs": dirs})


def apply(planned: Planned) -> bool:
    """Write the planned content; true when the file changed."""
    if planned.new == planned.current:
        return False
    planned.path.parent.mkdir(parents=True, exist_ok=True)
    st.write_atomic(planned.path, planned.new)
    return True


def revert(target: Target, path: Path, root: Path, record: dict[str, Any]) -> str:
    """Undo an install of ``target`` at ``path``; returns what happened: ``restored``, ``removed``,
    ``cleaned`` (our entries taken out of a file edited since), ``unchanged`` or ``missing``."""
    current = st.read_bytes(path)
    before = st.decode(record["before"])
    if current is None:
        outcome = "missing"
    elif st.sha256(current) == record["sha256"]:
        outcome = _restore(path, current, before)
    else:
        out, empty = target.remove(current)
        if empty and before is None:
            path.unlink()
            outcome = "removed"
        elif out != current:
            st.write_atomic(path, out)
            outcome = "cleaned"
        else:
            outcome = "unchanged"
    if not path.exists():
        _remove_dirs(root, record["created_dirs"])
    return outcome


def _restore(path: Path, current: bytes, before: bytes | None) -> str:
    if before is None:
        path.unlink()
        return "removed"
    if before == current:
        return "unchanged"
    st.write_atomic(path, before)
    return "restored"


def _missing_dirs(path: Path, root: Path) -> list[str]:
    """Directories between ``root`` and ``path`` that do not exist yet, outermost first, relative to root."""
    missing = []
    folder = path.parent
    while folder != root and root in folder.parents and not folder.exists():
        missing.append(folder.relative_to(root).as_posix())
        folder = folder.parent
    return missing[::-1]


def _remove_dirs(root: Path, dirs: list[str]) -> None:
    for rel in reversed(dirs):  # deepest first; a directory the user has put files in stays
        with contextlib.suppress(OSError):
            (root / rel).rmdir()
