"""The body store: ``refs/hive/bodies/<machine>``, one signed commit whose tree maps body hash -> blob.

Bodies live apart from the signed log so a log stays append-only while a retracted body can still be
dropped: a write that deletes makes a parentless commit (pushed with force), so nothing reaches the deleted
body any more, and the log entry keeps only the hash. A write that only adds has the previous snapshot as its
parent, so a push or fetch sends what that write added instead of the whole store (git leaves out only what
the other side reaches by ancestry).

The tree fans out on the hash (``ab/cd/<hash>``, ``Hive-Layout: fanout-2``), so a put rewrites three small
trees whatever the store's size, and two snapshots are compared by walking only the subtrees whose ids
differ. A v1 store (every body at the root) is still read, and the first write migrates it. Each write
signs a version one above every copy of this machine's store it can see (its own ref and the remotes'
copies of it), so the server guard, which refuses a version that does not go up, accepts it.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Iterable, Iterator, Mapping

import pygit2
from nacl.signing import SigningKey

from gitive.constants import CAS_RETRIES, MAX_BODY_BYTES
from gitive.core.keys import machine_id
from gitive.errors import InvalidRecord, RaceLost
from gitive.store import refs, snapshots
from gitive.store.snapshots import FANOUT, FLAT, Snapshot

_BLOB = pygit2.enums.FileMode.BLOB
_TREE = pygit2.enums.FileMode.TREE
_HEX = frozenset("0123456789abcdef")


def is_body_hash(text: str) -> bool:
    return len(text) == 64 and _HEX.issuperset(text)


def _check_hash(body_hash: str) -> None:
    if not is_body_hash(body_hash):
        raise InvalidRecord(f"{body_hash!r} is not a body hash (64 lowercase hex characters)")


def _is_prefix(name: str) -> bool:
    return len(name) == 2 and _HEX.issuperset(name)


def _child(tree: pygit2.Tree | None, name: str, mode: int) -> pygit2.Object | None:
    if tree is None or name not in tree:
        return None
    obj = tree[name]
    return obj if obj.filemode == mode else None


def locate(repo: pygit2.Repository, tree_id: str, layout: str, body_hash: str) -> pygit2.Oid | None:
    """The blob id a snapshot tree holds for ``body_hash`` (three tree reads in the fan-out layout)."""
    tree = repo[tree_id]
    if layout == FLAT:
        found = _child(tree, body_hash, _BLOB)
    else:
        mid = _child(tree, body_hash[:2], _TREE)
        leaf = _child(mid, body_hash[2:4], _TREE)  # type: ignore[arg-type]
        found = _child(leaf, body_hash, _BLOB)  # type: ignore[arg-type]
    return found.id if found is not None else None


def _items(repo: pygit2.Repository, tree_id: str | None) -> Iterator[tuple[bytes, str, str]]:
    """(mode, name, id) of each entry of a tree, parsed from its raw bytes: about 20 times faster than
    iterating a pygit2 Tree, which builds an object per entry (this is the catch-up hot path)."""
    if tree_id is None:
        return
    kind, data = repo.odb.read(tree_id)
    if kind != pygit2.enums.ObjectType.TREE:
        return
    width = len(tree_id) // 2  # 20 bytes for SHA-1 repositories, 32 for SHA-256
    i, end = 0, len(data)
    while i < end:
        space = data.index(b" ", i)
        nul = data.index(b"\0", space)
        yield data[i:space], data[space + 1:nul].decode("utf-8", "replace"), data[nul + 1:nul + 1 + width].hex()
        i = nul + 1 + width


_WELL_FORMED: dict[tuple[bytes, int, int], re.Pattern[bytes]] = {}


def _raw_records(repo: pygit2.Repository, tree_id: str, mode: bytes, name_len: int) -> list[bytes] | None:
    """The raw entries of a tree when it is exactly a run of same-shaped records (every honest fan-out
    folder is), checked in one C-speed match; None otherwise (then the general parser reads it)."""
    kind, data = repo.odb.read(tree_id)
    if kind != pygit2.enums.ObjectType.TREE:
        return []
    width = len(tree_id) // 2
    pattern = _WELL_FORMED.get((mode, name_len, width))
    if pattern is None:
        one = re.escape(mode) + rb" [0-9a-f]{%d}\x00.{%d}" % (name_len, width)
        pattern = _WELL_FORMED[(mode, name_len, width)] = re.compile(rb"(?:" + one + rb")*", re.S)
    if not pattern.fullmatch(data):
        return None
    size = len(mode) + 2 + name_len + width
    return [data[i:i + size] for i in range(0, len(data), size)]


def _decode(records: Iterable[bytes], mode: bytes, name_len: int) -> dict[str, str]:
    start = len(mode) + 1
    return {r[start:start + name_len].decode(): r[start + name_len + 1:].hex() for r in records}


def _records(repo: pygit2.Repository, tree_id: str, mode: bytes, name_len: int) -> list[tuple[str, str]] | None:
    raw = _raw_records(repo, tree_id, mode, name_len)
    return None if raw is None else list(_decode(raw, mode, name_len).items())


def _leaf_entries(repo: pygit2.Repository, tree_id: str | None, prefix: str) -> Iterator[tuple[str, str]]:
    if tree_id is None:
        return
    fast = _records(repo, tree_id, b"100644", 64)
    if fast is not None:
        yield from (item for item in fast if item[0].startswith(prefix))
        return
    for mode, name, oid in _items(repo, tree_id):
        if mode == b"100644" and is_body_hash(name) and name.startswith(prefix):
            yield name, oid


def _subtrees(repo: pygit2.Repository, tree_id: str | None) -> dict[str, str]:
    if tree_id is None:
        return {}
    fast = _records(repo, tree_id, b"40000", 2)
    if fast is not None:
        return dict(fast)
    return {name: oid for mode, name, oid in _items(repo, tree_id) if mode == b"40000" and _is_prefix(name)}


def entries(repo: pygit2.Repository, tree_id: str, layout: str) -> Iterator[tuple[str, str]]:
    """Every (body hash, blob id) in a snapshot tree; entries at the wrong place or of the wrong type are
    skipped, so a lookup by path and a listing always agree."""
    if layout == FLAT:
        yield from _leaf_entries(repo, tree_id, "")
        return
    for a, mid in _subtrees(repo, tree_id).items():
        for b, leaf in _subtrees(repo, mid).items():
            yield from _leaf_entries(repo, leaf, a + b)


def _diff_level(repo: pygit2.Repository, old: str | None, new: str | None, prefix: str, depth: int,
                added: dict[str, str], removed: set[str]) -> None:
    if depth == 2:
        before = dict(_leaf_entries(repo, old, prefix))
        after = dict(_leaf_entries(repo, new, prefix))
        added.update({h: blob for h, blob in after.items() if before.get(h) != blob})
        removed.update(h for h in before if h not in after)
        return
    raw_old = _raw_records(repo, old, b"40000", 2) if old else []
    raw_new = _raw_records(repo, new, b"40000", 2) if new else []
    if raw_old is not None and raw_new is not None:  # compare raw entries: only changed ones are decoded
        changed = set(raw_old) ^ set(raw_new)
        olds = _decode((r for r in raw_old if r in changed), b"40000", 2)
        news = _decode((r for r in raw_new if r in changed), b"40000", 2)
    else:
        olds, news = _subtrees(repo, old), _subtrees(repo, new)
    for name in olds.keys() | news.keys():
        o, n = olds.get(name), news.get(name)
        if o != n:  # an unchanged subtree is skipped by its id, whatever it holds
            _diff_level(repo, o, n, prefix + name, depth + 1, added, removed)


def changes(repo: pygit2.Repository, old: Snapshot | None, new: Snapshot) -> tuple[dict[str, str], set[str]]:
    """What ``new`` holds that ``old`` did not (hash -> blob id), and the hashes it dropped.

    Between two fan-out trees this reads only the subtrees whose ids differ, so its cost is what the write
    changed; a v1 (flat) tree on either side is listed whole, once.
    """
    added: dict[str, str] = {}
    removed: set[str] = set()
    if old is not None and old.tree == new.tree:
        return added, removed
    if old is None or FLAT in (old.layout, new.layout):
        before = dict(entries(repo, old.tree, old.layout)) if old is not None else {}
        after = dict(entries(repo, new.tree, new.layout))
        return ({h: b for h, b in after.items() if before.get(h) != b}, {h for h in before if h not in after})
    _diff_level(repo, old.tree, new.tree, "", 0, added, removed)
    return added, removed


def _bad_entry(item: pygit2.Object, depth: int, prefix: str) -> str | None:
    name = item.name or ""
    if depth < 2:
        return None if item.filemode == _TREE and _is_prefix(name) else f"{prefix}{name}: expected a folder"
    if item.filemode != _BLOB or not is_body_hash(name) or not name.startswith(prefix):
        return f"{name[:70]!r} does not belong under {prefix or 'the root'}"
    if item.size > MAX_BODY_BYTES:
        return f"body {name[:12]} is {item.size} bytes (at most {MAX_BODY_BYTES})"
    return None


def _shape_level(old: pygit2.Tree | None, new: pygit2.Tree, prefix: str, depth: int) -> str | None:
    olds = {} if old is None else {item.name: item.id for item in old}
    for item in new:
        if olds.get(item.name) == item.id:
            continue  # unchanged since the accepted snapshot: checked when that one came in
        why = _bad_entry(item, depth, prefix)
        if why is None and depth < 2:
            before = old[item.name] if old is not None and item.name in old else None
            why = _shape_level(before if isinstance(before, pygit2.Tree) else None, item, prefix + item.name,
                               depth + 1)  # type: ignore[arg-type]
        if why:
            return why
    return None


def shape_problem(repo: pygit2.Repository, old: Snapshot | None, new: Snapshot) -> str | None:
    """Why a pushed body snapshot's tree is malformed, looking only at what changed since ``old``."""
    if new.layout == FLAT:
        for item in repo[new.tree]:
            if item.filemode != _BLOB or not is_body_hash(item.name or ""):
                return f"{(item.name or '')[:70]!r} is not a body in a v1 store"
        return None
    base = repo[old.tree] if old is not None and old.layout == FANOUT else None
    why = _shape_level(base, repo[new.tree], "", 0)
    return f"malformed body store: {why}" if why else None


def _apply(repo: pygit2.Repository, root: pygit2.Tree | None, change: Mapping[str, pygit2.Oid | None]
           ) -> pygit2.Oid | None:
    """Write the fan-out tree ``root`` with puts (blob ids) and deletes (None); None if nothing changed."""
    grouped: dict[str, dict[str, dict[str, pygit2.Oid | None]]] = {}
    for body_hash, blob in change.items():
        grouped.setdefault(body_hash[:2], {}).setdefault(body_hash[2:4], {})[body_hash] = blob
    top = repo.TreeBuilder(root) if root is not None else repo.TreeBuilder()
    changed = False
    for a, by_mid in grouped.items():
        mid = _child(root, a, _TREE)
        mid_builder = repo.TreeBuilder(mid) if mid is not None else repo.TreeBuilder()
        mid_changed = False
        for b, items in by_mid.items():
            leaf = _child(mid, b, _TREE)  # type: ignore[arg-type]
            leaf_builder = repo.TreeBuilder(leaf) if leaf is not None else repo.TreeBuilder()
            leaf_changed = False
            for body_hash, blob in items.items():
                present = leaf_builder.get(body_hash)
                if blob is None and present is not None:
                    leaf_builder.remove(body_hash)
                    leaf_changed = True
                elif blob is not None and (present is None or present.id != blob):
                    leaf_builder.insert(body_hash, blob, _BLOB)
                    leaf_changed = True
            if not leaf_changed:
                continue
            mid_changed = True
            if len(leaf_builder):
                mid_builder.insert(b, leaf_builder.write(), _TREE)
            elif mid_builder.get(b) is not None:
                mid_builder.remove(b)  # an emptied folder goes, so equal stores have equal trees
        if not mid_changed:
            continue
        changed = True
        if len(mid_builder):
            top.insert(a, mid_builder.write(), _TREE)
        elif top.get(a) is not None:
            top.remove(a)
    return top.write() if changed else None


def _base(repo: pygit2.Repository, local: Snapshot | None, tracked: list[Snapshot]
          ) -> tuple[Snapshot | None, dict[str, pygit2.Oid | None]]:
    """The snapshot to build on, and puts to merge into it.

    Normally that is the local store. When a remote holds a newer copy of it (written by another clone
    with this machine's key), the write starts from that copy and adds back what only the local one has:
    bodies are content-addressed and only retraction deletes them (which the index redoes), so a union
    loses nothing.
    """
    newest = max(tracked, key=lambda s: s.version, default=None)
    if newest is not None and (local is None or newest.version > local.version):
        extra = changes(repo, newest, local)[0] if local is not None else {}
        return newest, {h: pygit2.Oid(hex=b) for h, b in extra.items()}
    return local, {}


def _needed(repo: pygit2.Repository, base: Snapshot | None, change: Mapping[str, pygit2.Oid | None]) -> bool:
    if base is None:
        return any(blob is not None for blob in change.values())
    return any(locate(repo, base.tree, base.layout, h) != blob for h, blob in change.items())


def _rewrite(repo: pygit2.Repository, key: SigningKey, team_id: str, change: dict[str, bytes | None]) -> bool:
    """Apply puts (bytes) and deletes (None) in one signed snapshot and one CAS; false if nothing changed."""
    me = machine_id(key)
    name = refs.bodies_ref(me)
    blobs = {h: (repo.create_blob(data) if data is not None else None) for h, data in change.items()}
    for attempt in range(CAS_RETRIES):
        old = refs.tip(repo, name)
        local, tracked = snapshots.own_copies(repo, team_id, "bodies", me)
        base, extra = _base(repo, local, tracked)
        if base is local and not _needed(repo, base, blobs):
            return False
        root: pygit2.Tree | None = None
        if base is not None and base.layout == FLAT:  # the first write to a v1 store migrates it
            extra = {h: pygit2.Oid(hex=b) for h, b in entries(repo, base.tree, FLAT)} | extra
        elif base is not None:
            root = repo[base.tree]
        tree = _apply(repo, root, extra | blobs)
        if tree is None:
            tree = root.id if root is not None else repo.TreeBuilder().write()
        deletes = any(blob is None for blob in blobs.values())
        parent = base.commit if root is not None and base is not None and not deletes else None
        version = snapshots.next_version(local, tracked)
        commit = snapshots.write(repo, key, team_id, "bodies", tree, f"bodies of {me[:12]}", version, parent)
        if refs.set_if_equals(repo, name, old, commit, "gitive: bodies"):
            return True
        time.sleep(random.uniform(0.001, 0.005) * (1 + attempt))
    raise RaceLost(f"could not update {name}: other writers kept moving it; try again")


def put(repo: pygit2.Repository, key: SigningKey, team_id: str, body_hash: str, data: bytes) -> bool:
    """Store ``data`` under ``body_hash`` in this machine's store; false if it was already there.

    The caller checks that ``body_hash`` really is the hash of ``data`` (its meaning is the record's).
    Atomic: one compare-and-swap of the bodies ref, retried on a race.

    Raises:
        InvalidRecord: ``body_hash`` is not a body hash.
        RaceLost: other writers kept moving the ref.
    """
    _check_hash(body_hash)
    return _rewrite(repo, key, team_id, {body_hash: data})


def put_many(repo: pygit2.Repository, key: SigningKey, team_id: str, items: Mapping[str, bytes]) -> bool:
    """Store many bodies in one snapshot (an import, a migration); false if every one was there already."""
    for body_hash in items:
        _check_hash(body_hash)
    return _rewrite(repo, key, team_id, dict(items))


def delete(repo: pygit2.Repository, key: SigningKey, team_id: str, body_hashes: list[str]) -> bool:
    """Drop bodies from this machine's store (one rewrite); false if none was there."""
    for body_hash in body_hashes:
        _check_hash(body_hash)
    return _rewrite(repo, key, team_id, dict.fromkeys(body_hashes))


def reconcile(repo: pygit2.Repository, key: SigningKey, team_id: str) -> bool:
    """Rewrite this machine's store when a remote holds a newer copy of it, so the next push goes up in
    version instead of being refused; true if it wrote."""
    return _rewrite(repo, key, team_id, {})


def own(repo: pygit2.Repository, machine: str) -> tuple[str, str] | None:
    """(tree id, layout) of ``machine``'s store in this repository, read from its own ref (not verified:
    a repository's own refs are written by its own machine)."""
    tip = refs.tip(repo, refs.bodies_ref(machine))
    if tip is None:
        return None
    commit = repo[tip]
    layout = FANOUT if f"\n{snapshots.LAYOUT}{FANOUT}\n" in commit.message else FLAT
    return str(commit.tree_id), layout


def get(repo: pygit2.Repository, machine: str, body_hash: str) -> bytes | None:
    """A body from ``machine``'s store in this repository, by path (never a walk of refs or trees)."""
    _check_hash(body_hash)
    found = own(repo, machine)
    blob = locate(repo, *found, body_hash) if found else None
    return repo[blob].data if blob is not None else None


def has(repo: pygit2.Repository, machine: str, body_hash: str) -> bool:
    _check_hash(body_hash)
    found = own(repo, machine)
    return found is not None and locate(repo, *found, body_hash) is not None


def hashes(repo: pygit2.Repository, machine: str) -> list[str]:
    """Every hash in ``machine``'s store here (a full listing: for doctor and tests, not hot paths)."""
    found = own(repo, machine)
    return sorted(h for h, _ in entries(repo, *found)) if found else []
