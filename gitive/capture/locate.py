"""Finding a repository's git dir, its config and gitive's index from a working directory (stdlib only).

Hooks run in a harness's process with only a cwd; importing pygit2 would cost 85 ms, so this reads the few
things it needs from the files git itself keeps.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import NamedTuple

_SECTION = re.compile(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*$')
_KEY = re.compile(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*?))?\s*$")


class Located(NamedTuple):
    toplevel: Path
    git_dir: Path  # this work tree's git dir
    common_dir: Path  # the repository's shared git dir (differs for linked worktrees)


def find(cwd: str | os.PathLike[str]) -> Located | None:
    """The repository containing ``cwd``, or None."""
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


def index_path(found: Located) -> Path:
    """Where gitive's index for this repository lives (in the team store's git dir)."""
    config = read_config(found.common_dir)
    store = config.get("hive.teamstore")
    base = Path(store) if store else found.common_dir
    return base / "gitive" / "index.sqlite"


def project_id(found: Located) -> str | None:
    """The project id cached by the last gitive command run here (computing it needs blake3)."""
    try:
        return (found.common_dir / "gitive" / "project-id").read_text().strip() or None
    except OSError:
        return None
