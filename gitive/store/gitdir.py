"""Reading a repository's git dirs, config and ref tips from the files git keeps (standard library only).

Hooks, ``gitive --version``-cheap paths and read commands whose index is already fresh use this instead of
pygit2, which costs ~85 ms to import. Only what gitive itself writes is read: plain config values (no
includes) and direct refs.
"""

from __future__ import annotations

import os
import re
from collections import namedtuple
from pathlib import Path

# typing costs each hook process about 5 ms to import; with postponed annotations it is needed only by checkers
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import NamedTuple


_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*$')
_KEY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*?))?\s*$")
HIVE_TOPS = ("hive", "hive-remotes", "hive-pinned")


if TYPE_CHECKING:
    class Located(NamedTuple):
        toplevel: Path
        git_dir: Path  # this work tree's git dir
        common_dir: Path  # the repository's shared git dir (differs for linked worktrees)
else:  # the same tuple, without importing typing at run time
    Located = namedtuple("Located", "toplevel git_dir common_dir")


def find(cwd: str | os.PathLike[str]) -> Located | None:
    """The repository whose work tree contains ``cwd``, or None."""
    here = Path(cwd).resolve()
    for folder in (here, *here.parents):
        dot = folder / ".git"
        if dot.is_dir():
            return Located(folder, dot, dot)
        if dot.is_file():
            text = dot.read_text(errors="replace").strip()
            if text.startswith("gitdir:"):
                git_dir = (folder / text[7:].strip()).resolve()
                common = git_dir
                marker = git_dir / "commondir"
                if marker.is_file():
                    common = (git_dir / marker.read_text().strip()).resolve()
                return Located(folder, git_dir, common)
    return None


def read_config(git_dir: Path) -> dict[str, str]:
    """``section.subsection.key`` -> last value, for the simple values gitive writes (no includes)."""
    return {key: values[-1] for key, values in read_config_all(git_dir).items()}


def read_config_all(git_dir: Path) -> dict[str, list[str]]:
    """``section.subsection.key`` -> every value, in file order (multi-valued keys like ``hive.remote``)."""
    out: dict[str, list[str]] = {}
    section = ""
    try:
        lines = (git_dir / "config").read_text(errors="replace").splitlines()
    except OSError:
        return out
    for line in lines:
        stripped = line.split("#", 1)[0].split(";", 1)[0] if '"' not in line else line
        if m := _SECTION.match(stripped):
            section = m.group(1).lower() + (f".{m.group(2)}" if m.group(2) is not None else "")
        elif (m := _KEY.match(stripped)) and section:
            value = (m.group(2) or "true").strip()
            if len(value) >= 2 and value[0] == value[-1] == '"':
                value = value[1:-1]
            out.setdefault(f"{section}.{m.group(1).lower()}", []).append(value)
    return out


def hive_tips(git_dir: Path) -> dict[str, str] | None:
    """Tips of every hive ref, read from git's own files (packed-refs, then loose refs, which win).

    Returns None when the answer could be wrong (a writer holds a lock, a symbolic ref, an unreadable file), so
    the caller asks pygit2 instead. Reading costs well under a millisecond, where a process costs several.
    """
    tips: dict[str, str] = {}
    try:
        for line in (git_dir / "packed-refs").read_text().splitlines():
            if line and line[0] not in "#^" and " refs/hive" in line:
                oid, _, name = line.partition(" ")
                tips[name] = oid
    except FileNotFoundError:
        pass
    except OSError:
        return None
    for top in HIVE_TOPS:
        base = git_dir / "refs" / top
        for folder, _, files in os.walk(base):
            for name in files:
                if name.endswith(".lock"):
                    return None  # a writer is busy: let the full path look
                path = Path(folder) / name
                try:
                    oid = path.read_text().strip()
                except OSError:
                    return None
                if oid.startswith("ref:"):
                    return None
                tips["refs/" + str(path.relative_to(git_dir / "refs"))] = oid
    return tips
