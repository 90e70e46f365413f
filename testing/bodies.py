"""Looking for bodies the way a test must: everywhere in a repository, not the way gitive looks them up.

gitive finds a body through the index (``body_locations``) or by path in one machine's store. A test that
asks "is this text still anywhere here?" walks every body snapshot ref instead, in either layout, and
``reachable_text`` greps every object reachable from any ref.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pygit2

from gitive.index.bodies import body_ref_machine
from gitive.store import bodies, refs, snapshots


def held_anywhere(repo: pygit2.Repository, body_hash: str) -> bytes | None:
    """The body under ``body_hash`` in any body snapshot ref of ``repo`` (own, fetched or pinned)."""
    for name, tip in refs.tips(repo, "refs/").items():
        if body_ref_machine(name) is None:
            continue
        commit = repo[tip]
        for layout in (snapshots.FANOUT, snapshots.FLAT):
            blob = bodies.locate(repo, str(commit.tree_id), layout, body_hash)
            if blob is not None:
                return repo[blob].data
    return None


def blob_of(repo: pygit2.Repository, machine: str, body_hash: str) -> str:
    """The blob id of ``body_hash`` in ``machine``'s own store (KeyError when absent)."""
    found = bodies.own(repo, machine)
    blob = bodies.locate(repo, *found, body_hash) if found else None
    if blob is None:
        raise KeyError(body_hash)
    return str(blob)


def reachable_objects(git_dir: str) -> list[str]:
    """Every object id reachable from any ref or reflog of the repository at ``git_dir``."""
    out = subprocess.run(["git", "rev-list", "--objects", "--all", "--reflog"], cwd=git_dir, check=True,
                         capture_output=True, text=True).stdout
    return sorted({line.split(" ", 1)[0] for line in out.splitlines() if line})


def reachable_text(git_dir: str, needles: list[str]) -> list[tuple[str, str]]:
    """(object id, needle) for each reachable object whose content contains one of ``needles``."""
    ids = reachable_objects(git_dir)
    proc = subprocess.run(["git", "cat-file", "--batch"], cwd=git_dir, check=True, capture_output=True,
                          input=("\n".join(ids) + "\n").encode())
    data, found, pos = proc.stdout, [], 0
    wanted = [(n, n.encode()) for n in needles]
    while pos < len(data):
        header_end = data.index(b"\n", pos)
        oid, _, size = data[pos:header_end].decode().split(" ")
        body = data[header_end + 1: header_end + 1 + int(size)]
        pos = header_end + 1 + int(size) + 1
        found += [(oid, text) for text, raw in wanted if raw in body]
    return found


def v1_snapshot(repo: pygit2.Repository, key: object, team_id: str, kind: str, tree: pygit2.Oid | str,
                title: str = "v1 snapshot") -> str:
    """A snapshot commit exactly as gitive wrote one before versions (2026-12): only ``Hive-Sig`` over
    ``<tree>/<machine>``. No ref moves."""
    from gitive.core.keys import machine_id
    from gitive.core.signed import domain

    me = machine_id(key)  # type: ignore[arg-type]
    sig = key.sign(domain(team_id, kind) + f"{tree}/{me}".encode()).signature.hex()  # type: ignore[attr-defined]
    who = pygit2.Signature(me[:16], f"{me}@hive", 1_700_000_000, 0)
    oid = tree if isinstance(tree, pygit2.Oid) else pygit2.Oid(hex=tree)
    return str(repo.create_commit(None, who, who, f"{title}\n\n{snapshots.TRAILER}{sig}\n", oid, []))


def flat_tree(repo: pygit2.Repository, items: dict[str, bytes]) -> pygit2.Oid:
    """A v1 body tree: every body at the root, named by its hash."""
    builder = repo.TreeBuilder()
    for name, data in items.items():
        builder.insert(name, repo.create_blob(data), pygit2.enums.FileMode.BLOB)
    return builder.write()


def v1_store(repo: pygit2.Repository, key: object, team_id: str, items: dict[str, bytes]) -> str:
    """Make ``key``'s body store in ``repo`` a v1 (flat, unversioned) one holding ``items``; return the tip."""
    from gitive.core.keys import machine_id

    commit = v1_snapshot(repo, key, team_id, "bodies", flat_tree(repo, items), "bodies (v1)")
    refs.force_set(repo, refs.bodies_ref(machine_id(key)), commit, "test: v1 store")  # type: ignore[arg-type]
    return commit


def rewrap(repo: pygit2.Repository, commit_id: str, message: str | None = None,
           tree: pygit2.Oid | None = None, parents: list[str] | None = None) -> str:
    """A copy of a snapshot commit with another message, tree or parents (the signature text kept)."""
    commit = repo[commit_id]
    who = pygit2.Signature("forger", "forger@hive", 1_700_000_000, 0)
    return str(repo.create_commit(None, who, who, commit.message if message is None else message,
                                  commit.tree_id if tree is None else tree,
                                  [pygit2.Oid(hex=p) for p in parents or []]))


def age_loose_objects(git_dir: Path, seconds: int = 7200) -> None:
    """Make every loose object look ``seconds`` old, as if written that long ago (upkeep keeps young ones)."""
    past = time.time() - seconds
    for folder in (git_dir / "objects").iterdir():
        if len(folder.name) == 2:
            for obj in folder.iterdir():
                os.utime(obj, (past, past))
