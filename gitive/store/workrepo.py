"""A worker's own git folder, and what the anchor reads of it once the worker is gone.

The anchor's clean worktree is a linked worktree of the anchor's repository, whose ``.git`` holds its remotes,
its config and the team's hive refs. A sandboxed worker must see none of that, yet agents expect ``git status``,
``git diff`` and ``git commit`` to work. So before the worker runs, the worktree's ``.git`` file is pointed at a
git folder of the worker's own (in its home): the anchor's objects borrowed read-only through
``objects/info/alternates``, ``HEAD`` detached at the base, a copy of the worktree's index, an identity, and
nothing else (no remote, no credential helper, no hook, no ``include``).

Everything the worker could write is untrusted afterwards. The anchor never runs git with the worker's config:
its own commands name the worktree's real administrative folder (``--git-dir``, read before the worker ran)
and turn fsmonitor and hooks off; the worker's folder is read with libgit2, which runs no command from a config.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pygit2

from gitive.store import git

WORKER_NAME, WORKER_EMAIL = "gitive worker", "worker@gitive.invalid"
MAX_WALK = 10_000
_SAFE = ["-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null"]


def admin_dir(path: Path) -> Path:
    """The administrative folder of the linked worktree at ``path`` (from its ``.git`` file, as git wrote it)."""
    text = (path / ".git").read_text()
    if not text.startswith("gitdir:"):
        raise ValueError(f"{path}/.git is not a linked worktree's file")
    return Path(text.removeprefix("gitdir:").strip())


def own_git(path: Path, admin: Path) -> list[str]:
    """The git arguments that act on the worktree ``path`` through the anchor's ``admin`` folder only."""
    return [*_SAFE, f"--git-dir={admin}", f"--work-tree={path}"]


def give(repo: pygit2.Repository, path: Path, folder: Path, commit: str) -> Path:
    """Give the worktree at ``path`` a git folder of its own in ``folder`` at ``commit``; the anchor's
    administrative folder of the worktree, which the anchor keeps using.

    Raises:
        GitCommandError: git could not make the folder.
    """
    admin = admin_dir(path)
    git.run(["init", "--quiet", "--bare", "--template=", str(folder)])
    for key, value in (("core.bare", "false"), ("user.name", WORKER_NAME), ("user.email", WORKER_EMAIL),
                       ("commit.gpgSign", "false")):
        git.run([f"--git-dir={folder}", "config", key, value])
    (folder / "objects" / "info").mkdir(parents=True, exist_ok=True)
    common = Path(repo.path).resolve() / "objects"
    (folder / "objects" / "info" / "alternates").write_text(f"{common}\n")
    (folder / "HEAD").write_text(f"{commit}\n")
    if (admin / "index").exists():
        shutil.copyfile(admin / "index", folder / "index")
    (path / ".git").write_text(f"gitdir: {folder}\n")
    return admin


def objects_dir(repo: pygit2.Repository) -> Path:
    """The anchor repository's object folder (mounted read-only for the worker)."""
    return Path(repo.path).resolve() / "objects"


def produced(folder: Path, path: Path, base: str, branch: str) -> str | None:
    """Why what the worker left must be refused, or None: a ref beside ``refs/heads/<branch>``, a commit not on
    top of ``base``, or a nested repository in the worktree (``git add`` would record it as a submodule)."""
    nested = _nested_git(path)
    if nested:
        return f"the worker left a git repository inside the worktree ({nested})"
    try:
        repo = pygit2.Repository(str(folder), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
        allowed = f"refs/heads/{branch}"
        for name in repo.references:
            if name != allowed:
                return f"the worker made {name}: it may commit only on {allowed} or a detached HEAD"
        tips = [repo.head.target] if not repo.head_is_unborn else []
        tips += [repo.references[allowed].target] if allowed in repo.references else []
        for tip in tips:
            why = _on_top(repo, str(tip), base)
            if why:
                return why
    except (pygit2.GitError, KeyError, ValueError, OSError) as exc:
        return f"the worker's git folder cannot be read ({type(exc).__name__}: {str(exc)[:200]})"
    return None


def _on_top(repo: pygit2.Repository, tip: str, base: str) -> str | None:
    """Whether every commit from ``tip`` back to ``base`` is new and has only new commits or ``base`` as parents."""
    walker = repo.walk(pygit2.Oid(hex=tip), pygit2.enums.SortMode.TOPOLOGICAL)
    walker.hide(pygit2.Oid(hex=base))
    seen = []
    for n, commit in enumerate(walker):
        if n >= MAX_WALK:
            return f"the worker made more than {MAX_WALK} commits"
        seen.append(commit)
    new = {str(c.id) for c in seen}
    for commit in seen:
        stray = [str(p) for p in commit.parent_ids if str(p) != base and str(p) not in new]
        if stray or not commit.parent_ids:
            return (f"the worker's commit {str(commit.id)[:12]} is not on top of the base {base[:12]} "
                    f"(it brings {(stray or ['a root'])[0][:12]})")
    return None


def _nested_git(path: Path) -> str | None:
    for top, dirs, files in os.walk(path):
        here = Path(top)
        if ".git" in dirs + files and here != path:
            return str((here / ".git").relative_to(path))
        if here == path and ".git" in dirs:
            dirs.remove(".git")
    return None
