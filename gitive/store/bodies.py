"""The body store: ``refs/hive/bodies/<machine>``, one parentless commit whose tree maps body hash -> blob.

Bodies live apart from the signed log so a log stays append-only while a retracted body can still be
dropped: deleting rewrites this one commit (pushed with force), and the log entry keeps only the hash.
"""

from __future__ import annotations

import random
import time

import pygit2
from nacl.signing import SigningKey

from gitive.constants import BODIES_REF_PREFIX, CAS_RETRIES, REMOTES_REF_PREFIX
from gitive.core.keys import machine_id
from gitive.errors import InvalidRecord, RaceLost
from gitive.store import refs, snapshots

_BLOB = pygit2.enums.FileMode.BLOB


def _check_hash(body_hash: str) -> None:
    if len(body_hash) != 64 or any(c not in "0123456789abcdef" for c in body_hash):
        raise InvalidRecord(f"{body_hash!r} is not a body hash (64 lowercase hex characters)")


def _tree_of(repo: pygit2.Repository, tip: str | None) -> pygit2.Tree | None:
    return repo[tip].tree if tip else None


def _rewrite(repo: pygit2.Repository, key: SigningKey, team_id: str, change: dict[str, bytes | None]) -> bool:
    """Apply puts (bytes) and deletes (None) in one CAS of the bodies ref; false if nothing changed."""
    machine = machine_id(key)
    name = refs.bodies_ref(machine)
    for attempt in range(CAS_RETRIES):
        old = refs.tip(repo, name)
        tree = _tree_of(repo, old)
        builder = repo.TreeBuilder(tree) if tree is not None else repo.TreeBuilder()
        changed = False
        for body_hash, data in change.items():
            present = builder.get(body_hash) is not None
            if data is None and present:
                builder.remove(body_hash)
                changed = True
            elif data is not None and not present:
                builder.insert(body_hash, repo.create_blob(data), _BLOB)
                changed = True
        if not changed:
            return False
        commit = snapshots.write(repo, key, team_id, "bodies", builder.write(), f"bodies of {machine[:12]}")
        if refs.set_if_equals(repo, name, old, commit, "gitive: bodies"):
            return True
        time.sleep(random.uniform(0.001, 0.005) * (1 + attempt))
    raise RaceLost(f"could not update {name}: other writers kept moving it; try again")


def put(repo: pygit2.Repository, key: SigningKey, team_id: str, body_hash: str, data: bytes) -> bool:
    """Store ``data`` under ``body_hash`` in this machine's store; false if it was already there.

    The caller checks that ``body_hash`` really is the hash of ``data`` (its meaning is the record's).
    """
    _check_hash(body_hash)
    return _rewrite(repo, key, team_id, {body_hash: data})


def delete(repo: pygit2.Repository, key: SigningKey, team_id: str, body_hashes: list[str]) -> bool:
    """Drop bodies from this machine's store (one rewrite); false if none was there."""
    for body_hash in body_hashes:
        _check_hash(body_hash)
    return _rewrite(repo, key, team_id, dict.fromkeys(body_hashes))


def get(repo: pygit2.Repository, body_hash: str) -> bytes | None:
    """Find a body in any body store this repository holds: its own and every fetched peer's."""
    _check_hash(body_hash)
    for name, oid in refs.tips(repo, "refs/").items():
        if not (name.startswith(BODIES_REF_PREFIX) or
                (name.startswith(REMOTES_REF_PREFIX) and "/bodies/" in name)):
            continue
        commit = repo[oid]
        if not isinstance(commit, pygit2.Commit):
            continue
        try:
            item = commit.tree[body_hash]
        except KeyError:
            continue
        blob = repo[item.id]
        if isinstance(blob, pygit2.Blob):
            return blob.data
    return None


def hashes(repo: pygit2.Repository, machine: str) -> list[str]:
    tip = refs.tip(repo, refs.bodies_ref(machine))
    return [item.name for item in repo[tip].tree] if tip else []
