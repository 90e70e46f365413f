"""Opening repositories and reading or writing their git config."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from gitive.errors import NotARepository

if TYPE_CHECKING:
    import pygit2


def open_repo(path: Path | str | None = None) -> pygit2.Repository:
    """Open the repository containing ``path`` (default: the current directory).

    Raises:
        NotARepository: ``path`` is not inside a git repository.
    """
    import pygit2

    start = str(path or os.getcwd())
    found = pygit2.discover_repository(start)
    if found is None:
        raise NotARepository(f"{start} is not inside a git repository; cd into your project's clone")
    return pygit2.Repository(found)


def open_at(path: Path | str) -> pygit2.Repository:
    """Open the repository at ``path`` (a git dir or a work tree), as libgit2 finds it from there.

    Raises:
        NotARepository: there is no repository at ``path``.
    """
    import pygit2

    try:
        return pygit2.Repository(str(path))
    except pygit2.GitError:
        raise NotARepository(f"{path} is not a git repository") from None


def init_bare(path: Path | str) -> pygit2.Repository:
    """Create an empty bare repository at ``path`` (or open the one there) and return it."""
    import pygit2

    return pygit2.init_repository(str(path), bare=True)


def head(path: Path | str) -> tuple[str | None, str | None]:
    """What HEAD of the repository at ``path`` names (a branch's short name, or ``HEAD`` when detached) and the
    commit it points at; ``(None, None)`` when there is no repository there or HEAD is unborn."""
    import pygit2

    try:
        ref = pygit2.Repository(str(path)).head
        return ref.shorthand, str(ref.target)
    except (pygit2.GitError, KeyError, ValueError):
        return None, None


def git_dir(repo: pygit2.Repository) -> Path:
    return Path(repo.path)


def workdir(repo: pygit2.Repository) -> Path:
    return Path(repo.workdir or repo.path)


def config_get(repo: pygit2.Repository, key: str) -> str | None:
    try:
        return repo.config[key]
    except KeyError:
        return None


def config_set(repo: pygit2.Repository, key: str, value: str) -> None:
    repo.config[key] = value


def config_unset(repo: pygit2.Repository, key: str) -> None:
    """Remove ``key`` from the repository's config (nothing happens if it is not set)."""
    with contextlib.suppress(KeyError):
        del repo.config[key]


def config_unset_matching(repo: pygit2.Repository, key: str, pattern: str) -> None:
    """Remove the values of multi-valued ``key`` that match the regular expression ``pattern`` (nothing
    happens when none does)."""
    with contextlib.suppress(KeyError):
        repo.config.delete_multivar(key, pattern)


def config_all(repo: pygit2.Repository, key: str) -> list[str]:
    try:
        return [str(v) for v in repo.config.get_multivar(key)]
    except KeyError:
        return []


def config_add(repo: pygit2.Repository, key: str, value: str) -> None:
    """Add a value to a multi-valued key unless it is there already (idempotent)."""
    if value not in config_all(repo, key):
        # "^$" matches no existing value, so set_multivar appends rather than replaces.
        repo.config.set_multivar(key, "^$", value)


def remotes(repo: pygit2.Repository) -> list[str]:
    return [r.name for r in repo.remotes]


def remote_add(repo: pygit2.Repository, name: str, url: str) -> None:
    """Add remote ``name`` at ``url`` (git's default fetch refspec)."""
    repo.remotes.create(name, url)


def remote_url(repo: pygit2.Repository, name: str) -> str | None:
    try:
        return repo.remotes[name].url
    except (KeyError, ValueError):  # ValueError: pygit2's InvalidSpecError, a name no remote can have (a URL)
        return None
