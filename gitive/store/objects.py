"""Questions about ordinary git objects (commits, files) asked by higher layers, answered with pygit2."""

from __future__ import annotations

from typing import NamedTuple

import pygit2

from gitive.errors import InvalidRecord
from gitive.store.types import TreeId


class CommitText(NamedTuple):
    commit: str
    text: str  # the message, then the patch against its first parent
    files: tuple[str, ...] = ()  # the paths it changed against its first parent (both sides of a rename)


class FileAt(NamedTuple):
    commit: str
    blob: str
    data: bytes


def present(repo: pygit2.Repository, oid: str) -> bool:
    """Whether the object ``oid`` (full hex) is in ``repo``; false for text that is no object id."""
    try:
        return oid in repo
    except (ValueError, TypeError):
        return False


def blob_data(repo: pygit2.Repository, oid: str, max_bytes: int) -> bytes | None:
    """The bytes of blob ``oid`` when ``repo`` holds it as a blob of at most ``max_bytes``; None when it is
    missing, another kind of object, larger, or ``oid`` is no object id (what a peer wrote is never trusted)."""
    try:
        obj = repo[oid]
    except (KeyError, ValueError):
        return None
    if obj.type_str != "blob" or obj.size > max_bytes:
        return None
    return obj.data


def commit_tree(repo: pygit2.Repository, oid: str) -> TreeId | None:
    """The tree of commit ``oid`` (the object itself, never a tag peeled); None when ``repo`` has no commit
    of that id."""
    try:
        obj = repo[oid]
    except (KeyError, ValueError):
        return None
    return TreeId(str(obj.tree_id)) if obj.type_str == "commit" else None


def _commit(repo: pygit2.Repository, rev: str) -> pygit2.Commit:
    try:
        return repo.revparse_single(rev).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError):
        raise InvalidRecord(f"commit {rev!r} is not in this repository") from None


def commit_text(repo: pygit2.Repository, rev: str) -> CommitText:
    """A commit's message and diff, the text a quote citing it must come from.

    Raises:
        InvalidRecord: ``rev`` does not name a commit here.
    """
    commit = _commit(repo, rev)
    diff = _diff(repo, commit)
    return CommitText(str(commit.id), f"{commit.message}\n{diff.patch or ''}", _paths(diff))


def _diff(repo: pygit2.Repository, commit: pygit2.Commit) -> pygit2.Diff:
    return repo.diff(commit.parents[0], commit) if commit.parents else commit.tree.diff_to_tree(swap=True)


def _paths(diff: pygit2.Diff) -> tuple[str, ...]:
    found = {d.new_file.path for d in diff.deltas} | {d.old_file.path for d in diff.deltas}
    return tuple(sorted(p for p in found if p))


def changed_files(repo: pygit2.Repository, commit_id: str) -> list[str] | None:
    """The paths a commit changed against its first parent; None when the commit is not here."""
    try:
        commit = repo[commit_id]
    except (KeyError, ValueError):
        return None
    if not isinstance(commit, pygit2.Commit):
        return None
    return list(_paths(_diff(repo, commit)))


def file_at(repo: pygit2.Repository, path: str, rev: str = "HEAD") -> FileAt:
    """A file's blob at a commit.

    Raises:
        InvalidRecord: no such commit, or no such file (or a directory) at it.
    """
    commit = _commit(repo, rev)
    try:
        obj = repo[commit.tree[path].id]
    except KeyError:
        raise InvalidRecord(f"file {path!r} does not exist at {str(commit.id)[:12]}") from None
    if not isinstance(obj, pygit2.Blob):
        raise InvalidRecord(f"{path!r} is a directory at {str(commit.id)[:12]}; cite a file")
    return FileAt(str(commit.id), str(obj.id), obj.data)


def head_blob(repo: pygit2.Repository, path: str) -> str | None:
    """The blob id of ``path`` at HEAD (None if absent or HEAD is unborn)."""
    try:
        head = repo.head.peel(pygit2.Commit)
        return str(head.tree[path].id)
    except (pygit2.GitError, KeyError, ValueError):
        return None


def recent_author_emails(repo: pygit2.Repository, paths: list[str], since_days: int = 30) -> list[str]:
    """Author emails of the commits that touched ``paths`` in the last ``since_days`` days, one per commit."""
    from gitive.store import git

    if not paths:
        return []
    code, out, _ = git.run(["log", f"--since={since_days}.days", "--format=%ae", "--no-merges", "--", *paths],
                           cwd=repo.workdir or repo.path, check=False)
    return [line.strip().lower() for line in out.splitlines() if line.strip()] if code == 0 else []


def read_head_file(repo: pygit2.Repository, path: str) -> str | None:
    """A file's text at HEAD, or None."""
    try:
        head = repo.head.peel(pygit2.Commit)
        obj = repo[head.tree[path].id]
    except (pygit2.GitError, KeyError, ValueError):
        return None
    return obj.data.decode("utf-8", "replace") if isinstance(obj, pygit2.Blob) else None


def reverted(repo: pygit2.Repository, commits: list[str], since_ms: int) -> bool:
    """Whether any of ``commits`` was reverted (``git revert`` message) in a commit made since ``since_ms``."""
    from gitive.store import git

    if not commits:
        return False
    args = ["log", "--all", f"--since={since_ms // 1000}", "--format=%B%x00"]
    for sha in commits:
        args += ["--grep", f"This reverts commit {sha}"]
    code, out, _ = git.run(args, cwd=repo.workdir or repo.path, check=False)
    return code == 0 and bool(out.strip("\0\n "))


class TipFacts(NamedTuple):
    email: str
    at: int  # the commit's time, ms
    merged: bool  # reachable from one of the branches it was compared with


def tip_facts(repo: pygit2.Repository, tip: str, others: list[str]) -> TipFacts | None:
    """Who made a branch's tip, when, and whether one of ``others`` (commit ids) already contains it."""
    try:
        commit = repo[tip].peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError):
        return None
    merged = False
    for other in others:
        try:
            if other == tip or repo.descendant_of(other, tip):
                merged = True
                break
        except (KeyError, ValueError, pygit2.GitError):
            continue
    return TipFacts(commit.author.email.lower(), commit.commit_time * 1000, merged)
