"""Signed snapshot commits: the rewritable refs (bodies, presence) as one parentless commit each.

A snapshot is not a log entry, so it carries its signature in a ``Hive-Sig:`` trailer of the commit message,
over ``hive/1/<team>/<kind>/`` + the tree id + the machine id. A server guard or a reader can then tell a
machine's own snapshot from one someone else pushed under its name.
"""

from __future__ import annotations

import pygit2
from nacl.signing import SigningKey

from gitive.core.clock import now_ms
from gitive.core.keys import machine_id, verify
from gitive.core.signed import domain

TRAILER = "Hive-Sig: "


def _message(team_id: str, kind: str, tree: str, machine: str) -> bytes:
    return domain(team_id, kind) + f"{tree}/{machine}".encode()


def write(repo: pygit2.Repository, key: SigningKey, team_id: str, kind: str, tree: pygit2.Oid | str,
          title: str) -> str:
    """Write a parentless commit of ``tree`` signed by this machine; return its id (no ref moves)."""
    me = machine_id(key)
    sig = key.sign(_message(team_id, kind, str(tree), me)).signature.hex()
    who = pygit2.Signature(me[:16], f"{me}@hive", now_ms() // 1000, 0)
    tree_oid = tree if isinstance(tree, pygit2.Oid) else pygit2.Oid(hex=tree)
    return str(repo.create_commit(None, who, who, f"{title}\n\n{TRAILER}{sig}\n", tree_oid, []))


def signature_ok(repo: pygit2.Repository, team_id: str, kind: str, machine: str, commit_id: str) -> bool:
    """True when ``commit_id`` is a parentless snapshot commit signed by ``machine`` for ``kind``."""
    try:
        commit = repo[commit_id]
    except (KeyError, ValueError):
        return False
    if not isinstance(commit, pygit2.Commit) or commit.parent_ids:
        return False
    sig = next((ln[len(TRAILER):].strip() for ln in commit.message.splitlines() if ln.startswith(TRAILER)), "")
    return verify(machine, _message(team_id, kind, str(commit.tree_id), machine), sig)
