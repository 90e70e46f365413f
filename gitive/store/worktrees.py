"""Scratch checkouts for the anchor's work: a clean ``git worktree`` of one commit, and what came of it.

Writers of records never touch a working tree (DESIGN §5); prepared work is the exception by design: a worker
edits files. It does so in a worktree of its own, detached at the base commit, never in a person's checkout,
and the worktree is removed when the work is done. Pushing a branch is here too (``git push`` through the one
git helper), but the anchor calls it only through ``gitive/anchor/tiers.py``, which decides what it may push.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import NamedTuple

import pygit2

from gitive.errors import GitCommandError, GitiveError
from gitive.store import git


class Pushed(NamedTuple):
    ok: bool
    detail: str  # git's own words when it refused


def _top(repo: pygit2.Repository) -> str:
    return repo.workdir or repo.path


def add(repo: pygit2.Repository, path: Path, commit: str) -> Path:
    """A clean worktree of ``repo`` at ``commit`` (detached) in ``path``, replacing whatever was there.

    Raises:
        GitiveError: git could not make it (the commit is missing, the disk is full...).
    """
    remove(repo, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        git.run(["worktree", "add", "--force", "--detach", "--quiet", str(path), commit], cwd=_top(repo))
    except GitCommandError as exc:
        raise GitiveError(f"cannot make a worktree of {commit[:12]}: {exc.stderr.strip()[:300]}") from None
    return path


def remove(repo: pygit2.Repository, path: Path) -> None:
    """Remove the worktree at ``path`` (and its administrative files); nothing when there is none."""
    if path.exists():
        git.run(["worktree", "remove", "--force", "--force", str(path)], cwd=_top(repo), check=False)
        shutil.rmtree(path, ignore_errors=True)
    git.run(["worktree", "prune"], cwd=_top(repo), check=False)


def _in(path: Path, admin: Path | None) -> list[str]:
    """Arguments naming the worktree's own administrative folder (``admin``): after a worker ran, ``path/.git``
    is the worker's, and git must not read its config (``store/workrepo.py``)."""
    from gitive.store.workrepo import own_git

    return own_git(path, admin) if admin is not None else []


def tree_of(path: Path, admin: Path | None = None) -> str:
    """The tree of everything in the worktree at ``path`` as it is now: tracked, changed and new files (what
    ``.gitignore`` ignores stays out). Uses the worktree's own index, never a person's."""
    git.run([*_in(path, admin), "add", "--all", "."], cwd=path)
    _, out, _ = git.run([*_in(path, admin), "write-tree"], cwd=path)
    return out.strip()


def head_of(path: Path) -> str:
    _, out, _ = git.run(["rev-parse", "HEAD"], cwd=path)
    return out.strip()


def merge_tree(repo: pygit2.Repository, ours: str, theirs: str) -> tuple[str | None, list[str]]:
    """Merge two commits without any checkout (``git merge-tree --write-tree``, git >= 2.38): the merged tree,
    or None and the conflicting paths."""
    code, out, err = git.run(["merge-tree", "--write-tree", "--name-only", "--no-messages", ours, theirs],
                             cwd=repo.path, check=False)
    lines = [ln for ln in out.splitlines() if ln.strip()]
    if code == 0 and lines:
        return lines[0].strip(), []
    if code == 1 and lines:
        return None, sorted(set(lines[1:]))
    raise GitiveError(f"git merge-tree failed: {(err or out).strip()[:300]}")


def checkout_tree(repo: pygit2.Repository, path: Path, tree: str, parents: list[str]) -> str:
    """A worktree at a new, unreferenced commit of ``tree`` over ``parents`` (a merge result to test)."""
    who = pygit2.Signature("gitive", "gitive@localhost", 0, 0)
    commit = str(repo.create_commit(None, who, who, "gitive: speculative merge", pygit2.Oid(hex=tree),
                                    [pygit2.Oid(hex=p) for p in parents]))
    add(repo, path, commit)
    return commit


def push(repo: pygit2.Repository, remote: str, commit: str, ref: str, *, force: bool = False,
         lease: str | None = None, timeout: float = 300, signing: list[str] | None = None) -> Pushed:
    """``git push remote commit:ref`` (fast-forward only unless ``force``; ``lease`` is the tip it replaces);
    ``signing`` (``pushcert.signing_config``) signs a push certificate when the remote asks for one."""
    args = [*(signing or []), "push", "--porcelain", "--no-verify"]
    if signing:
        args.append("--signed=if-asked")
    if lease is not None:
        args.append(f"--force-with-lease={ref}:{lease}")
    elif force:
        args.append("--force")
    code, out, err = git.run([*args, remote, f"{commit}:{ref}"], cwd=_top(repo), check=False, timeout=timeout)
    if code == 0:
        return Pushed(True, "")
    words = " ".join(ln.strip() for ln in (err + "\n" + out).splitlines()
                     if ln.strip() and not ln.startswith("To ") and ln.strip() != "Done")
    return Pushed(False, words[:500])


def delete_branch(repo: pygit2.Repository, remote: str, ref: str, timeout: float = 300) -> Pushed:
    code, out, err = git.run(["push", "--porcelain", "--no-verify", remote, f":{ref}"], cwd=_top(repo),
                             check=False, timeout=timeout)
    return Pushed(code == 0, (err or out).strip()[:500])


def fetch_ref(repo: pygit2.Repository, remote: str, src: str, dst: str, timeout: float = 300) -> bool:
    """Fetch one ref of ``remote`` into ``dst`` (forced); false when the remote has no such ref."""
    code, _, _ = git.run(["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", remote, f"+{src}:{dst}"],
                         cwd=repo.path, check=False, timeout=timeout)
    return code == 0


def current_branch(repo: pygit2.Repository) -> str | None:
    """The branch checked out in ``repo`` (None: detached or unborn)."""
    try:
        return None if repo.head_is_detached else repo.head.shorthand
    except pygit2.GitError:
        return None


def tip(repo: pygit2.Repository, ref: str) -> str | None:
    """The commit ``ref`` points at (peeled), or None."""
    try:
        return str(repo.revparse_single(ref).peel(pygit2.Commit).id)
    except (KeyError, ValueError, pygit2.GitError):
        return None


def contains(repo: pygit2.Repository, descendant: str, ancestor: str) -> bool:
    """Whether ``ancestor`` is ``descendant`` or one of its ancestors."""
    if descendant == ancestor:
        return True
    try:
        return bool(repo.descendant_of(pygit2.Oid(hex=descendant), pygit2.Oid(hex=ancestor)))
    except (KeyError, ValueError, pygit2.GitError):
        return False


def has(repo: pygit2.Repository, commit: str) -> bool:
    try:
        return isinstance(repo[commit], pygit2.Commit)
    except (KeyError, ValueError):
        return False


def message(repo: pygit2.Repository, commit: str) -> str:
    return str(repo[commit].message)  # type: ignore[attr-defined]


def parent_of(repo: pygit2.Repository, commit: str) -> list[str]:
    return [str(p) for p in repo[commit].parent_ids]  # type: ignore[attr-defined]


def apply_change(path: Path, commit: str, admin: Path | None = None) -> bool:
    """Apply ``commit``'s change (against its first parent) to the worktree at ``path``, uncommitted; false
    (and the worktree as it was) when it does not apply cleanly."""
    own = _in(path, admin)
    code, _, _ = git.run([*own, "cherry-pick", "--no-commit", "--strategy=ort", commit], cwd=path, check=False)
    if code == 0:
        return True
    git.run([*own, "cherry-pick", "--abort"], cwd=path, check=False)
    git.run([*own, "reset", "--hard", "--quiet"], cwd=path, check=False)
    git.run([*own, "clean", "-fdq"], cwd=path, check=False)
    return False


def clean(path: Path, admin: Path | None = None) -> None:
    """Put the worktree at ``path`` back to its commit: tracked files restored, untracked and ignored removed
    (what a test run left behind is not part of the change)."""
    git.run([*_in(path, admin), "reset", "--hard", "--quiet"], cwd=path)
    git.run([*_in(path, admin), "clean", "-fdxq"], cwd=path)


def merge_base(repo: pygit2.Repository, a: str, b: str) -> str | None:
    try:
        found = repo.merge_base(pygit2.Oid(hex=a), pygit2.Oid(hex=b))
    except (KeyError, ValueError, pygit2.GitError):
        return None
    return str(found) if found else None
