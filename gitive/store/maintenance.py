"""Keeping a repository healthy under many small gitive objects and loose refs.

libgit2 writes every object and ref loose. Measured (ECOSYSTEM-NOTES): 10,000 entries leave 30,000 loose
objects (121 MB) until packed, and a push of 1,000 loose refs is 8x slower than of packed ones. We pack
without pruning: ``git repack -d`` (no ``-a``, no ``--prune``) only moves loose objects into a pack, so
nothing any branch reaches, nor anything unreachable, is deleted.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

import pygit2

from gitive.constants import LOOSE_OBJECTS_PACK_THRESHOLD, LOOSE_REFS_PACK_THRESHOLD
from gitive.store import git


class Health(NamedTuple):
    loose_objects: int  # estimated, as `git gc --auto` does, from one fan-out directory
    loose_refs: int


def _loose_objects(gitdir: Path) -> int:
    sample = gitdir / "objects" / "17"
    try:
        return len(os.listdir(sample)) * 256
    except FileNotFoundError:
        return 0


def _loose_refs(gitdir: Path) -> int:
    count = 0
    for _, _, files in os.walk(gitdir / "refs"):
        count += sum(1 for f in files if not f.endswith(".lock"))
    return count


def health(repo: pygit2.Repository) -> Health:
    gitdir = Path(repo.path)
    return Health(_loose_objects(gitdir), _loose_refs(gitdir))


def needs_packing(h: Health) -> bool:
    return h.loose_objects > LOOSE_OBJECTS_PACK_THRESHOLD or h.loose_refs > LOOSE_REFS_PACK_THRESHOLD


def pack(repo: pygit2.Repository, force: bool = False) -> Health:
    """Pack loose objects and refs when they pile up (or always, with ``force``); never prunes."""
    h = health(repo)
    if force or h.loose_objects > LOOSE_OBJECTS_PACK_THRESHOLD:
        git.run(["repack", "-d", "-q"], cwd=repo.path)
    if force or h.loose_refs > LOOSE_REFS_PACK_THRESHOLD:
        git.run(["pack-refs", "--all"], cwd=repo.path)
    return health(repo)


def pack_refs(repo: pygit2.Repository) -> None:
    """``git pack-refs --all``: loose refs into ``packed-refs`` (what ``git gc`` does with them)."""
    git.run(["pack-refs", "--all"], cwd=repo.path)


def prune(repo: pygit2.Repository) -> str:
    """Drop unreachable objects now (e.g. bodies of retracted lessons) after expiring hive refs' reflogs.

    Reflogs of the user's own refs are left alone, so whatever they reach survives. Returns the repo path.
    """
    logs_dir = Path(repo.path) / "logs"
    hive_refs = [name for name in repo.references if name.startswith(("refs/hive/", "refs/hive-remotes/"))
                 and (logs_dir / name).exists()]  # git refuses to expire a reflog that does not exist
    if hive_refs:
        git.run(["reflog", "expire", "--expire=now", "--expire-unreachable=now", *hive_refs], cwd=repo.path)
    git.run(["gc", "--quiet", "--prune=now"], cwd=repo.path)
    return str(repo.path)
