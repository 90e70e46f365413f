"""Presence snapshots: ``refs/hive/presence/<machine>``, one signed parentless commit holding ``presence.json``.

Rewritten by its owner whenever its sessions change; each write signs a version one above every copy of
it this repository knows, so the guard (which refuses a version that does not go up) accepts it. A reader
takes the newest signed version among its sources, and never one older than it accepted before in the
same process (a daemon), so a replayed snapshot cannot bring back sessions that ended.
"""

from __future__ import annotations

import random
import time
from typing import NamedTuple

import pygit2
from nacl.signing import SigningKey

from gitive.constants import CAS_RETRIES
from gitive.core.keys import machine_id
from gitive.errors import RaceLost
from gitive.store import refs, snapshots
from gitive.store.snapshots import Snapshot

PRESENCE_FILE = "presence.json"
MAX_PRESENCE_BYTES = 256 * 1024

_accepted: dict[tuple[str, str], Snapshot] = {}  # (team, machine) -> newest accepted in this process


class Presence(NamedTuple):
    snapshot: Snapshot
    data: bytes


def _data(repo: pygit2.Repository, tree_id: str) -> bytes | None:
    tree = repo[tree_id]
    if PRESENCE_FILE not in tree:
        return None
    blob = tree[PRESENCE_FILE]
    if not isinstance(blob, pygit2.Blob) or blob.size > MAX_PRESENCE_BYTES:
        return None
    return blob.data


def publish(repo: pygit2.Repository, key: SigningKey, team_id: str, data: bytes) -> bool:
    """Write ``data`` as this machine's presence unless it is already what the ref holds; true if it wrote.

    Raises:
        RaceLost: other writers kept moving the ref.
    """
    me = machine_id(key)
    name = refs.presence_ref(me)
    blob = repo.create_blob(data)
    for attempt in range(CAS_RETRIES):
        old = refs.tip(repo, name)
        local, tracked = snapshots.own_copies(repo, team_id, "presence", me)
        behind = any(local is None or t.version > local.version for t in tracked)
        if local is not None and not behind and _data(repo, local.tree) == data:
            return False
        builder = repo.TreeBuilder()
        builder.insert(PRESENCE_FILE, blob, pygit2.enums.FileMode.BLOB)
        commit = snapshots.write(repo, key, team_id, "presence", builder.write(), f"presence of {me[:12]}",
                                 snapshots.next_version(local, tracked))
        if refs.set_if_equals(repo, name, old, commit, "gitive: presence"):
            return True
        time.sleep(random.uniform(0.001, 0.005) * (1 + attempt))
    raise RaceLost(f"could not update {name}: other writers kept moving it; try again")


def newest(repo: pygit2.Repository, team_id: str, machine: str, tips: list[str]) -> Presence | None:
    """The newest signed presence of ``machine`` among ``tips`` (its refs from every source), or None.

    A version below one this process accepted before is refused, as is any unsigned or stranger's commit.
    """
    found = [s for s in (snapshots.read(repo, team_id, "presence", machine, t) for t in set(tips)) if s]
    if not found:
        return None
    best = max(found, key=lambda s: (s.version, s.commit))
    seen = _accepted.get((team_id, machine))
    if seen is not None and best.version < seen.version:
        if seen.commit not in repo:
            return None
        best = seen  # a replayed older snapshot: keep showing the one accepted before
    data = _data(repo, best.tree)
    if data is None:
        return None
    _accepted[(team_id, machine)] = best
    return Presence(best, data)


def shape_problem(repo: pygit2.Repository, new: Snapshot) -> str | None:
    """Why a pushed presence snapshot's tree is malformed (it holds exactly one small presence.json)."""
    tree = repo[new.tree]
    if len(tree) != 1 or _data(repo, new.tree) is None:
        return f"a presence snapshot holds exactly one {PRESENCE_FILE} of at most {MAX_PRESENCE_BYTES} bytes"
    return None
