"""Upkeep: keeping a repository small and fast under many small gitive objects and loose refs.

libgit2 writes every object and ref loose, and every rewrite of a snapshot (bodies, presence) leaves the old
commit and the trees it replaced unreachable. Measured (ECOSYSTEM-NOTES): 10,000 entries leave 30,000 loose
objects (121 MB) until packed, and a push of 1,000 loose refs is 8x slower than of packed ones.

``git repack -d`` alone packs only reachable loose objects and never drops unreachable ones, so garbage piled
up and every sync saw "too many loose objects" again. ``git prune`` drops *every* unreachable loose object,
including a user's own dangling work (a dropped stash, a blob staged and then changed) that git would keep
for two weeks. So upkeep asks ``git prune --dry-run`` what git itself considers unreachable (it keeps
whatever any ref, reflog, index or worktree HEAD reaches) and deletes only the part that gitive wrote:
snapshot and entry commits (author ``<machine>@hive``) and the trees and blobs only they reached.

Upkeep runs when loose objects have grown by the threshold since it last ran, which ``<git dir>/gitive/
upkeep.json`` remembers, so a store whose remaining loose objects are the user's does not repack on every
sync. This module imports only the standard library at load time: the fast no-op sync reads the schedule.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections import namedtuple
from pathlib import Path

from gitive.constants import LOOSE_OBJECTS_PACK_THRESHOLD, LOOSE_REFS_PACK_THRESHOLD, UPKEEP_LOOSE_GROWTH

# typing (~5 ms) and json load only where needed: the no-op sync reads the schedule through ``due``
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NamedTuple

    import pygit2

STATE_FILE = Path("gitive") / "upkeep.json"
# A writer's new objects are unreferenced until its ref moves (milliseconds later); anything younger than the
# grace is kept, so upkeep never deletes what a concurrent writer is about to point at.
GRACE = "5.minutes.ago"
GC_GRACE = "10.seconds.ago"
_HIVE_EMAIL = rb"^(author|committer) [0-9a-f]{16} <[0-9a-f]{64}@hive> "  # compiled where used (re caches it)


if TYPE_CHECKING:
    class Health(NamedTuple):
        loose_objects: int  # estimated from a sample of fan-out folders, as `git gc --auto` does from one
        loose_refs: int

    class Upkeep(NamedTuple):
        packed: bool
        pruned: int  # unreachable gitive objects deleted
        before: Health
        after: Health
else:
    Health = namedtuple("Health", "loose_objects loose_refs")
    Upkeep = namedtuple("Upkeep", "packed pruned before after")


_SAMPLE = [f"{i:x}{i:x}" for i in range(16)]  # 16 of the 256 fan-out folders: 0.3 ms, within ~10% at 2,000


def _loose_objects(gitdir: Path) -> int:
    count = 0
    for folder in _SAMPLE:
        with contextlib.suppress(FileNotFoundError):
            count += len(os.listdir(gitdir / "objects" / folder))
    return count * 16


def _loose_refs(gitdir: Path) -> int:
    count = 0
    for _, _, files in os.walk(gitdir / "refs"):
        count += sum(1 for f in files if not f.endswith(".lock"))
    return count


def _gitdir(repo: pygit2.Repository | Path | str) -> Path:
    return Path(repo) if isinstance(repo, (str, Path)) else Path(repo.path)


def health(repo: pygit2.Repository | Path | str) -> Health:
    gitdir = _gitdir(repo)
    return Health(_loose_objects(gitdir), _loose_refs(gitdir))


def last_upkeep(repo: pygit2.Repository | Path | str) -> dict[str, Any]:
    """What the last upkeep left (``at`` ms, ``loose_objects``, ``pruned``), or {} if it never ran here."""
    try:
        text = (_gitdir(repo) / STATE_FILE).read_text()
    except OSError:
        return {}
    import json

    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def due(repo: pygit2.Repository | Path | str, h: Health | None = None) -> bool:
    """Whether upkeep should run: loose objects grew by the threshold since it last ran, or refs piled up."""
    h = h or health(repo)
    baseline = last_upkeep(repo).get("loose_objects", 0)
    grown = h.loose_objects - (baseline if isinstance(baseline, int) else 0)
    return grown > UPKEEP_LOOSE_GROWTH or h.loose_refs > LOOSE_REFS_PACK_THRESHOLD


def _remember(repo: pygit2.Repository | Path | str, result: Upkeep) -> None:
    import json

    from gitive.core.clock import now_ms

    path = _gitdir(repo) / STATE_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"version": 1, "at": now_ms(), "loose_objects": result.after.loose_objects,
                               "loose_refs": result.after.loose_refs, "pruned": result.pruned,
                               "packed": result.packed}, sort_keys=True))
    os.replace(tmp, path)


def _unreachable(gitdir: Path, expire: str) -> dict[str, str]:
    """Loose objects git itself would prune (nothing a ref, reflog, index or worktree reaches): id -> type."""
    from gitive.store import git

    _, out, _ = git.run(["prune", "--dry-run", f"--expire={expire}"], cwd=gitdir)
    found = {}
    for line in out.splitlines():
        oid, _, kind = line.strip().partition(" ")
        if len(oid) in (40, 64) and kind in ("commit", "tree", "blob", "tag"):
            found[oid] = kind
    return found


def hive_garbage(repo: pygit2.Repository, expire: str = GRACE) -> set[str]:
    """Unreachable loose objects that gitive wrote: its commits and what only they reach."""
    import pygit2

    gitdir = Path(repo.path)
    loose = _unreachable(gitdir, expire)
    roots = [oid for oid, kind in loose.items()
             if kind == "commit" and re.search(_HIVE_EMAIL, repo.odb.read(oid)[1][:400], re.MULTILINE)]
    garbage: set[str] = set()
    stack: list[str] = roots
    while stack:
        oid = stack.pop()
        if oid in garbage:
            continue
        garbage.add(oid)
        obj = repo[oid]
        children = [obj.tree_id] if isinstance(obj, pygit2.Commit) else (
            [item.id for item in obj] if isinstance(obj, pygit2.Tree) else [])
        stack += [str(c) for c in children if str(c) in loose and str(c) not in garbage]
    return garbage


def _delete_loose(gitdir: Path, oids: set[str]) -> int:
    removed = 0
    for oid in oids:
        try:
            (gitdir / "objects" / oid[:2] / oid[2:]).unlink()
            removed += 1
        except FileNotFoundError:
            pass
    return removed


def upkeep(repo: pygit2.Repository, force: bool = False) -> Upkeep:
    """Pack loose objects and refs, and delete gitive's own unreachable objects older than the grace period.

    Runs only when :func:`due` (or ``force``). Never deletes anything git would keep, nor anything a user
    wrote: see the module docstring. The result is remembered for the schedule.
    """
    from gitive.store import git

    before = health(repo)
    if not force and not due(repo, before):
        return Upkeep(False, 0, before, before)
    gitdir = Path(repo.path)
    pruned = _delete_loose(gitdir, hive_garbage(repo))
    git.run(["repack", "-d", "-q"], cwd=gitdir)
    if force or before.loose_refs > LOOSE_REFS_PACK_THRESHOLD:
        git.run(["pack-refs", "--all"], cwd=gitdir)
    result = Upkeep(True, pruned, before, health(repo))
    _remember(repo, result)
    return result


def pack(repo: pygit2.Repository, force: bool = False) -> Health:
    """Upkeep now if due (or always, with ``force``); the health after."""
    return upkeep(repo, force).after


def pack_refs(repo: pygit2.Repository) -> None:
    """``git pack-refs --all``: loose refs into ``packed-refs`` (what ``git gc`` does with them)."""
    from gitive.store import git

    git.run(["pack-refs", "--all"], cwd=repo.path)


def prune(repo: pygit2.Repository) -> Upkeep:
    """``gitive gc``: a full repack, and every unreachable gitive object older than ten seconds deleted.

    ``git repack -A -d`` turns unreachable objects in old packs (such as the body of a lesson retracted after
    it was packed) into loose ones with the pack's age, instead of dropping them: the user's own are then
    left to git's usual expiry, and only gitive's are deleted here.
    """
    from gitive.store import git

    gitdir = Path(repo.path)
    before = health(repo)
    logs_dir = gitdir / "logs"
    hive_refs = [name for name in repo.references if name.startswith(("refs/hive/", "refs/hive-remotes/",
                                                                       "refs/hive-pinned/"))
                 and (logs_dir / name).exists()]  # git refuses to expire a reflog that does not exist
    if hive_refs:
        git.run(["reflog", "expire", "--expire=now", "--expire-unreachable=now", *hive_refs], cwd=gitdir)
    git.run(["repack", "-A", "-d", "-q"], cwd=gitdir)
    pruned = _delete_loose(gitdir, hive_garbage(repo, GC_GRACE))
    git.run(["pack-refs", "--all"], cwd=gitdir)
    result = Upkeep(True, pruned, before, health(repo))
    _remember(repo, result)
    return result


class RemoteUpkeep(namedtuple("RemoteUpkeep", "path loose_objects auto_gc")):
    """What can be seen of a remote's own upkeep (only for one reached by a local path): its ``path``, its
    ``loose_objects``, and ``auto_gc``: git on the server packs by itself after pushes (receive.autogc and
    gc.auto not 0)."""

    __slots__ = ()
    path: str
    loose_objects: int
    auto_gc: bool

    @property
    def unpacked(self) -> bool:
        return self.loose_objects > (GIT_GC_AUTO if self.auto_gc else LOOSE_OBJECTS_PACK_THRESHOLD)


GIT_GC_AUTO = 6_700  # git's default gc.auto: past it, git on the server would have packed


def remote_upkeep(url: str) -> RemoteUpkeep | None:
    """The loose-object count and auto-gc settings of a remote reached by a local path (None otherwise:
    a hosted remote's disk cannot be seen from here)."""
    from gitive.store import git

    path = Path(url[7:] if url.startswith("file://") else url)
    if "://" in url or not (path / "objects").is_dir():
        return None

    def setting(key: str) -> str:
        return git.run(["config", "--get", key], cwd=path, check=False)[1].strip().lower()

    auto = setting("receive.autogc") not in ("false", "no", "off", "0") and setting("gc.auto") != "0"
    return RemoteUpkeep(str(path), _loose_objects(path), auto)


def purge(repo: pygit2.Repository, oids: set[str]) -> int:
    """Delete ``oids`` from the object database now if nothing reaches them any more; return how many.

    For objects that must not stay on disk (a retracted lesson's body): no grace period, since nobody may point
    at them again. A packed one is first turned loose by ``git repack -A -d`` (git keeps unreachable packed
    objects as loose ones), then deleted like the rest. Whatever git still reaches is kept.
    """
    from gitive.store import git

    gitdir = Path(repo.path)
    if not oids:
        return 0
    if any(not (gitdir / "objects" / oid[:2] / oid[2:]).exists() for oid in oids):
        git.run(["repack", "-A", "-d", "-q"], cwd=gitdir)
    unreachable = _unreachable(gitdir, "now")
    return _delete_loose(gitdir, {oid for oid in oids if oid in unreachable})
