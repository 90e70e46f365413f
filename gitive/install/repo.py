"""Where an install goes: the work tree, its git dirs and the hooks directory git really uses."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from gitive.errors import GitCommandError, NotARepository
from gitive.store import git


class Location(NamedTuple):
    toplevel: Path
    git_dir: Path  # this work tree's git dir: install.json lives here, next to the files it describes
    common_dir: Path  # shared by linked work trees: hooks, info/exclude and rewrites live here
    hooks_dir: Path  # `git rev-parse --git-path hooks`: core.hooksPath if set, else <common-dir>/hooks


def locate(path: Path | str | None = None) -> Location:
    """The repository whose work tree contains ``path`` (default: the current directory).

    Raises:
        NotARepository: ``path`` is not inside the work tree of a git repository.
    """
    start = Path(path or os.getcwd()).resolve()
    try:
        _, out, _ = git.run(["rev-parse", "--show-toplevel", "--git-dir", "--git-common-dir",
                             "--git-path", "hooks"], cwd=start)
    except GitCommandError:
        raise NotARepository(f"{start} is not inside a git work tree; cd into your project's clone") from None
    top, git_dir, common, hooks = out.splitlines()[:4]
    # rev-parse answers relative to the directory it ran in; a relative core.hooksPath is resolved the
    # same way git resolves it when it runs a hook (from the top of the work tree).
    return Location(Path(top), _absolute(start, git_dir), _absolute(start, common),
                    _absolute(start, os.path.expanduser(hooks)))


def _absolute(base: Path, path: str) -> Path:
    return Path(os.path.normpath(base / path))


def inside(path: Path, folder: Path) -> bool:
    try:
        path.resolve().relative_to(folder.resolve())
    except ValueError:
        return False
    return True


def in_work_tree(loc: Location, path: Path) -> bool:
    """True for a path in the work tree proper (not inside a git dir kept there, such as ``.git/hooks``)."""
    return inside(path, loc.toplevel) and not inside(path, loc.git_dir) and not inside(path, loc.common_dir)


def is_tracked(loc: Location, path: Path) -> bool:
    """True when ``path`` (in the work tree) is a file git tracks."""
    rel = os.path.relpath(path.resolve(), loc.toplevel.resolve())
    code, out, _ = git.run(["ls-files", "-z", "--", rel], cwd=loc.toplevel, check=False)
    return code == 0 and bool(out.strip("\0"))


def is_ignored(loc: Location, path: Path) -> bool:
    """True when git ignores ``path`` (in the work tree), so an untracked file there shows nowhere."""
    rel = os.path.relpath(path.resolve(), loc.toplevel.resolve())
    code, _, _ = git.run(["check-ignore", "-q", "--", rel], cwd=loc.toplevel, check=False)
    return code == 0
