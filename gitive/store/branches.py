"""Ordinary branches as proposed changes: a commit of some files over a base, on ``refs/heads/hive/<name>``.

Generated changes (skills exported from lessons) reach a shared branch only through review: they are written as
one commit on top of the base the person chose, never into the working tree or the index, and the branch moves
by compare-and-swap. Reading a directory of the base is here too, so callers need no pygit2.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import pygit2

from gitive.errors import GitiveError
from gitive.store import refs

PREFIX = "refs/heads/hive/"


class Written(NamedTuple):
    branch: str  # the full ref name
    commit: str
    base: str
    moved: bool  # false: the branch already held exactly this change


def resolve(repo: pygit2.Repository, rev: str) -> str:
    """The commit ``rev`` names.

    Raises:
        GitiveError: ``rev`` names no commit here.
    """
    try:
        return str(repo.revparse_single(rev).peel(pygit2.Commit).id)
    except (KeyError, ValueError, pygit2.GitError):
        raise GitiveError(f"{rev!r} names no commit in this repository; pass --base with a branch or commit") from None


def files_under(repo: pygit2.Repository, commit: str, directory: str) -> dict[str, bytes]:
    """Every file below ``directory`` at ``commit``, by its path from the repository root."""
    tree = repo[commit].peel(pygit2.Tree)
    try:
        top = tree[directory] if directory else tree
    except KeyError:
        return {}
    if not isinstance(top, pygit2.Tree):
        return {}
    out: dict[str, bytes] = {}
    stack: list[tuple[str, pygit2.Tree]] = [(directory, top)]
    while stack:
        prefix, current = stack.pop()
        for item in current:
            path = f"{prefix}/{item.name}" if prefix else item.name
            obj = repo[item.id]
            if isinstance(obj, pygit2.Tree):
                stack.append((path, obj))
            elif isinstance(obj, pygit2.Blob):
                out[path] = obj.data
    return out


def _apply(repo: pygit2.Repository, tree: pygit2.Tree | None, changes: Mapping[str, bytes | None]) -> pygit2.Oid:
    """``tree`` with ``changes`` (path -> new bytes, or None to delete) applied; empty folders disappear."""
    builder = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
    nested: dict[str, dict[str, bytes | None]] = {}
    for path, data in changes.items():
        head, sep, rest = path.partition("/")
        if sep:
            nested.setdefault(head, {})[rest] = data
        elif data is None:
            if tree is not None and head in tree:
                builder.remove(head)
        else:
            builder.insert(head, repo.create_blob(data), pygit2.enums.FileMode.BLOB)
    for head, inner in nested.items():
        existing = tree[head] if tree is not None and head in tree else None
        subtree = repo[existing.id] if existing is not None and existing.type_str == "tree" else None
        oid = _apply(repo, subtree, inner)  # type: ignore[arg-type]
        if len(repo[oid]) == 0:  # type: ignore[arg-type]
            if existing is not None:
                builder.remove(head)
        else:
            builder.insert(head, oid, pygit2.enums.FileMode.TREE)
    return builder.write()


def propose(repo: pygit2.Repository, name: str, base: str, changes: Mapping[str, bytes | None], message: str,
            who: tuple[str, str]) -> Written:
    """Write ``changes`` as one commit over ``base`` on ``refs/heads/hive/<name>``.

    Re-running with the same changes and base leaves the branch as it is; other content replaces the branch's
    commit (the branch is the proposal, always one change over its base). The ref moves by compare-and-swap.

    Raises:
        GitiveError: another writer moved the branch meanwhile.
    """
    ref = PREFIX + name
    base_commit = repo[base].peel(pygit2.Commit)
    tree = _apply(repo, base_commit.tree, changes)
    old = refs.tip(repo, ref)
    if old is not None:
        current = repo[old].peel(pygit2.Commit)
        if current.tree_id == tree and [str(p) for p in current.parent_ids] == [base]:
            return Written(ref, old, base, False)
    signature = pygit2.Signature(who[0], who[1])
    commit = str(repo.create_commit(None, signature, signature, message, tree, [base_commit.id]))
    if not refs.set_if_equals(repo, ref, old, commit, f"gitive: {message.splitlines()[0]}"):
        raise GitiveError(f"{ref} moved while it was being written; run the export again")
    return Written(ref, commit, base, True)


def identity(repo: pygit2.Repository) -> tuple[str, str]:
    """The person's git identity (user.name, user.email) for a commit they will review, or a plain default."""
    try:
        found = repo.default_signature
        return found.name, found.email
    except (KeyError, pygit2.GitError):
        return "gitive", "gitive@localhost"
