"""What a checkout shows about the task under way, for task-start recall (``lessons.recall_context``): the
branch checked out, the files changed in the work tree and in the branch's own recent commits, and those
commits' subjects. Read-only, from pygit2's status and history walk; no git process.
"""

from __future__ import annotations

import contextlib

import pygit2

from gitive.store.worktrees import current_branch

_CHANGED = (pygit2.GIT_STATUS_WT_MODIFIED | pygit2.GIT_STATUS_WT_NEW | pygit2.GIT_STATUS_WT_RENAMED
            | pygit2.GIT_STATUS_INDEX_MODIFIED | pygit2.GIT_STATUS_INDEX_NEW | pygit2.GIT_STATUS_INDEX_RENAMED)
_DEFAULTS = ("refs/remotes/origin/HEAD", "refs/remotes/origin/main", "refs/remotes/origin/master",
             "refs/heads/main", "refs/heads/master")


def read(repo: pygit2.Repository, max_files: int, max_commits: int) -> tuple[str | None, list[str], list[str]]:
    """(branch, changed files, commit subjects): the work tree's changes first, then the files of the
    branch's own commits (those not on the default branch), newest first; at most ``max_files`` files and
    ``max_commits`` subjects. A repository git cannot read gives what could be read."""
    if repo.is_bare:
        return None, [], []
    branch = current_branch(repo)
    changed: list[str] = []
    with contextlib.suppress(pygit2.GitError):
        changed = sorted(path for path, flags in repo.status(untracked_files="normal").items() if flags & _CHANGED)
    subjects: list[str] = []
    for commit in _own_commits(repo, branch, max_commits):
        subjects.append(commit.message.strip().splitlines()[0] if commit.message.strip() else "")
        changed += _files_of(repo, commit)
    return branch, list(dict.fromkeys(changed))[:max_files], [s for s in subjects if s]


def _own_commits(repo: pygit2.Repository, branch: str | None, limit: int) -> list[pygit2.Commit]:
    """The newest ``limit`` first-parent commits of HEAD that the default branch does not have (none when
    HEAD is the default branch itself or unborn)."""
    try:
        head = repo.head.peel(pygit2.Commit)
    except (pygit2.GitError, KeyError, ValueError):
        return []
    base = _default_tip(repo)
    if base is None or base == head.id or branch in ("main", "master"):
        return []
    stop = repo.merge_base(head.id, base)
    out: list[pygit2.Commit] = []
    commit = head
    while commit is not None and commit.id != stop and len(out) < limit:
        out.append(commit)
        commit = commit.parents[0] if commit.parents else None
    return out


def _default_tip(repo: pygit2.Repository) -> pygit2.Oid | None:
    for name in _DEFAULTS:
        try:
            return repo.lookup_reference(name).resolve().peel(pygit2.Commit).id
        except (KeyError, ValueError, pygit2.GitError):
            continue
    return None


def _files_of(repo: pygit2.Repository, commit: pygit2.Commit) -> list[str]:
    if not commit.parents:
        return []
    return [delta.new_file.path for delta in repo.diff(commit.parents[0], commit).deltas]
