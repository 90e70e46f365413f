"""The exact change between two commits: its hash (``diff_hash``), its stat, and the patch a person reads.

One approval covers one exact change on one base (DESIGN §8), so the change needs a name that every machine
computes the same way whatever its git version or diff settings. ``diff_hash`` is therefore not a hash of
patch text (which ``diff.algorithm``, rename detection or colour settings change) but of the tree-level change:
for every path that differs, its old and new mode and the blake3 of its old and new bytes, in path order.
Two commits with the same changed files and contents over their bases have the same ``diff_hash``; any byte,
mode, added or removed file changes it.
"""

from __future__ import annotations

from typing import NamedTuple

import pygit2

from gitive.core import canonical
from gitive.core.ids import blake3_hex
from gitive.store import git

DIFF_DOMAIN = b"hive/diff/1\n"
_PATCH_FLAGS = ("--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", "--diff-algorithm=myers",
                "--src-prefix=a/", "--dst-prefix=b/", "--full-index", "--binary")


class Change(NamedTuple):
    path: str
    old_mode: int | None
    new_mode: int | None
    old: bytes | None
    new: bytes | None


class Stat(NamedTuple):
    files: int
    insertions: int
    deletions: int
    paths: tuple[str, ...]
    removed: tuple[str, ...]  # paths the change deletes

    def as_dict(self) -> dict[str, object]:
        return {"files": self.files, "insertions": self.insertions, "deletions": self.deletions,
                "paths": list(self.paths[:200]), "removed": list(self.removed[:200])}


def _tree(repo: pygit2.Repository, rev: str) -> pygit2.Tree:
    return repo.revparse_single(rev).peel(pygit2.Tree)


def _blobs(repo: pygit2.Repository, tree: pygit2.Tree, prefix: str = "") -> dict[str, tuple[int, str]]:
    out: dict[str, tuple[int, str]] = {}
    for entry in tree:
        path = f"{prefix}{entry.name}"
        if entry.type_str == "tree":
            out.update(_blobs(repo, repo[entry.id], path + "/"))  # type: ignore[arg-type]
        else:
            out[path] = (entry.filemode, str(entry.id))
    return out


def changes(repo: pygit2.Repository, base: str, head: str) -> list[Change]:
    """Every path whose mode or content differs from ``base`` to ``head``, in path order."""
    old, new = _blobs(repo, _tree(repo, base)), _blobs(repo, _tree(repo, head))
    out = []
    for path in sorted(set(old) | set(new)):
        a, b = old.get(path), new.get(path)
        if a == b:
            continue
        out.append(Change(path, a[0] if a else None, b[0] if b else None,
                          repo[a[1]].data if a else None, repo[b[1]].data if b else None))  # type: ignore[attr-defined]
    return out


def diff_hash(repo: pygit2.Repository, base: str, head: str) -> str:
    """blake3 of the exact change from ``base`` to ``head`` (see the module docstring)."""
    rows = [[c.path, c.old_mode, c.new_mode, blake3_hex(c.old) if c.old is not None else None,
             blake3_hex(c.new) if c.new is not None else None] for c in changes(repo, base, head)]
    return blake3_hex(DIFF_DOMAIN + canonical.dumps(rows))


def stat(repo: pygit2.Repository, base: str, head: str) -> Stat:
    """Files changed, lines added and removed (binary files count as files, not lines)."""
    found = changes(repo, base, head)
    lines = line_changes(repo, base, head)
    return Stat(len(found), sum(len(a) for _, a in lines.values()), sum(len(r) for r, _ in lines.values()),
                tuple(c.path for c in found), tuple(c.path for c in found if c.new is None))


def line_changes(repo: pygit2.Repository, base: str, head: str) -> dict[str, tuple[list[str], list[str]]]:
    """path -> (lines the change removes, lines it adds), text files only (binary files are left out)."""
    import difflib

    out: dict[str, tuple[list[str], list[str]]] = {}
    for c in changes(repo, base, head):
        if b"\0" in (c.old or b"")[:8000] + (c.new or b"")[:8000]:
            continue
        old = (c.old or b"").decode("utf-8", "replace").splitlines()
        new = (c.new or b"").decode("utf-8", "replace").splitlines()
        gone, added = [], []
        for ln in difflib.unified_diff(old, new, lineterm="", n=0):
            if ln.startswith("-") and not ln.startswith("---"):
                gone.append(ln[1:])
            elif ln.startswith("+") and not ln.startswith("+++"):
                added.append(ln[1:])
        out[c.path] = (gone, added)
    return out


def patch(repo: pygit2.Repository, base: str, head: str, max_bytes: int = 2_000_000) -> str:
    """The patch from ``base`` to ``head`` as a person reads it (``git diff``), cut at ``max_bytes``."""
    _, out, _ = git.run(["diff", *_PATCH_FLAGS, base, head], cwd=repo.path)
    return out if len(out) <= max_bytes else out[:max_bytes] + "\n… (cut)\n"
