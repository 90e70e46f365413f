"""Signed snapshot commits: the rewritable refs (bodies, presence), one signed commit each.

A snapshot is not a log entry, so it carries its signature in trailers of the commit message
(docs/verification.md §5)::

    Hive-Version: <n>        monotonic per (machine, kind), starting at 1
    Hive-Layout: fanout-2    bodies only
    Hive-Sig: <hex>          over "hive/1/<team>/<kind>/" + "<tree>/<machine>/<n>"

The version is what lets a reader and the server guard refuse a replayed older snapshot: a signature alone
says who wrote a tree, not that it is the newest one. A v1 snapshot (written before versions, bodies in a
flat tree) has only ``Hive-Sig`` over ``<tree>/<machine>`` and reads as version 0.

A presence snapshot is parentless. A body snapshot may have one parent, the snapshot it was built on: git
leaves out of a push or fetch only what the other side's commits reach through ancestry, so a parentless
snapshot made every sync resend the whole store. A write that deletes a body is parentless again, so what
it deleted is reachable from nothing (see ``store.bodies``). Readers judge only the tip; the parent is
never trusted for anything.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import pygit2
from nacl.signing import SigningKey

from gitive.constants import BODIES_REF_PREFIX, PRESENCE_REF_PREFIX, REMOTES_REF_PREFIX
from gitive.core.clock import now_ms
from gitive.core.keys import machine_id, verify
from gitive.core.signed import domain
from gitive.errors import InvalidRecord
from gitive.store import refs

TRAILER = "Hive-Sig: "
VERSION = "Hive-Version: "
LAYOUT = "Hive-Layout: "
FANOUT = "fanout-2"
FLAT = "flat"  # v1 bodies: every body at the root of the tree, named by its hash
KINDS = ("bodies", "presence")
MAX_VERSION = 2**53  # far beyond any honest writer, small enough for every JSON and SQLite reader
_VERSION_RE = re.compile(r"[1-9][0-9]{0,15}")
_SIG_RE = re.compile(r"[0-9a-f]{128}")
_MAX_MESSAGE = 4096


class Snapshot(NamedTuple):
    """A snapshot commit that verified: who signed it, which version, and how its tree is laid out."""

    commit: str
    tree: str
    machine: str
    kind: str
    version: int  # 0 for a v1 snapshot
    layout: str  # FANOUT or FLAT for bodies, "" for presence


def _message(team_id: str, kind: str, tree: str, machine: str, version: int) -> bytes:
    signed = f"{tree}/{machine}" if version == 0 else f"{tree}/{machine}/{version}"
    return domain(team_id, kind) + signed.encode()


def write(repo: pygit2.Repository, key: SigningKey, team_id: str, kind: str, tree: pygit2.Oid | str,
          title: str, version: int, parent: str | None = None) -> str:
    """Write a commit of ``tree`` signed by this machine as ``version`` (on ``parent``, bodies only); no ref
    moves.

    Returns:
        The commit id.

    Raises:
        InvalidRecord: ``kind`` or ``version`` is not one a reader accepts.
    """
    if kind not in KINDS or not 1 <= version < MAX_VERSION:
        raise InvalidRecord(f"a {kind} snapshot needs a version from 1 (got {version})")
    if parent is not None and kind != "bodies":
        raise InvalidRecord(f"a {kind} snapshot has no parent")
    me = machine_id(key)
    sig = key.sign(_message(team_id, kind, str(tree), me, version)).signature.hex()
    trailers = f"{VERSION}{version}\n" + (f"{LAYOUT}{FANOUT}\n" if kind == "bodies" else "") + f"{TRAILER}{sig}\n"
    who = pygit2.Signature(me[:16], f"{me}@hive", now_ms() // 1000, 0)
    tree_oid = tree if isinstance(tree, pygit2.Oid) else pygit2.Oid(hex=tree)
    parents = [pygit2.Oid(hex=parent)] if parent else []
    return str(repo.create_commit(None, who, who, f"{title}\n\n{trailers}", tree_oid, parents))


def _trailers(message: str) -> dict[str, str]:
    """The ``Hive-*`` trailers of a snapshot message, each at most once (anything else is malformed)."""
    if len(message) > _MAX_MESSAGE:
        raise InvalidRecord("the commit message is too long for a snapshot")
    found: dict[str, str] = {}
    for line in message.splitlines():
        if not line.startswith("Hive-"):
            continue
        name, sep, value = line.partition(": ")
        if not sep or name not in ("Hive-Version", "Hive-Layout", "Hive-Sig") or name in found:
            raise InvalidRecord(f"unexpected or repeated trailer {name!r}")
        found[name] = value
    return found


def check(repo: pygit2.Repository, team_id: str, kind: str, machine: str, commit_id: str) -> Snapshot:
    """Verify that ``commit_id`` is a ``kind`` snapshot signed by ``machine`` for this team.

    Raises:
        InvalidRecord: why it is not (missing, not a commit, too many parents, malformed trailers, bad
            signature).
    """
    try:
        commit = repo[commit_id]
    except (KeyError, ValueError, TypeError):
        raise InvalidRecord(f"{commit_id[:12]} is not in this repository") from None
    if not isinstance(commit, pygit2.Commit):
        raise InvalidRecord("a snapshot is a commit")
    if len(commit.parent_ids) > (1 if kind == "bodies" else 0):
        raise InvalidRecord("a presence snapshot is parentless" if kind == "presence" else
                            "a body snapshot has at most one parent")
    trailers = _trailers(commit.message)
    sig = trailers.get("Hive-Sig", "")
    if not _SIG_RE.fullmatch(sig):
        raise InvalidRecord("unsigned: no Hive-Sig trailer")
    text = trailers.get("Hive-Version")
    layout = trailers.get("Hive-Layout")
    if text is None:
        version, want = 0, (FLAT if kind == "bodies" else None)
        if layout is not None:
            raise InvalidRecord("a layout without a version")
    elif _VERSION_RE.fullmatch(text) and int(text) < MAX_VERSION:
        version, want = int(text), (FANOUT if kind == "bodies" else None)
        if layout != (want if kind == "bodies" else None):
            raise InvalidRecord(f"layout {layout!r} is not {want or 'absent'} for a {kind} snapshot")
    else:
        raise InvalidRecord(f"Hive-Version {text[:20]!r} is not a positive integer")
    tree = str(commit.tree_id)
    if not verify(machine, _message(team_id, kind, tree, machine, version), sig):
        raise InvalidRecord(f"not a {kind} snapshot signed by {machine[:12]} for this team")
    return Snapshot(str(commit.id), tree, machine, kind, version, want or "")


def read(repo: pygit2.Repository, team_id: str, kind: str, machine: str, commit_id: str) -> Snapshot | None:
    """As :func:`check`, but None for anything that does not verify."""
    try:
        return check(repo, team_id, kind, machine, commit_id)
    except InvalidRecord:
        return None


def signature_ok(repo: pygit2.Repository, team_id: str, kind: str, machine: str, commit_id: str) -> bool:
    """True when ``commit_id`` is a ``kind`` snapshot signed by ``machine`` (any version)."""
    return read(repo, team_id, kind, machine, commit_id) is not None


def refusal(accepted: Snapshot | None, candidate: Snapshot) -> str | None:
    """Why ``candidate`` may not replace ``accepted`` (None when it may, or when it is the same commit).

    Versions only go up. A v1 snapshot (version 0) is accepted only while no versioned snapshot of that
    machine has been accepted: after that, an old client's write and a replay look the same.
    """
    if accepted is None or candidate.commit == accepted.commit:
        return None
    if candidate.version == 0:
        return None if accepted.version == 0 else (
            f"an unversioned (v1) snapshot after version {accepted.version} was accepted")
    if candidate.version <= accepted.version:
        return f"version {candidate.version} is not above the accepted version {accepted.version}"
    return None


def _own_ref(kind: str, machine: str) -> str:
    return f"{BODIES_REF_PREFIX if kind == 'bodies' else PRESENCE_REF_PREFIX}{machine}"


def own_copies(repo: pygit2.Repository, team_id: str, kind: str, me: str) -> tuple[Snapshot | None, list[Snapshot]]:
    """This machine's own ``kind`` snapshot here, and every remote's copy of it as last fetched (valid and
    different ones only): a new version must go above all of them, or the guard refuses the push."""
    local_tip = refs.tip(repo, _own_ref(kind, me))
    local = read(repo, team_id, kind, me, local_tip) if local_tip else None
    tracked = []
    for remote in repo.remotes.names():
        tip = refs.tip(repo, f"{REMOTES_REF_PREFIX}{remote}/{kind}/{me}")
        found = read(repo, team_id, kind, me, tip) if tip and tip != local_tip else None
        if found is not None:
            tracked.append(found)
    return local, tracked


def next_version(local: Snapshot | None, tracked: list[Snapshot]) -> int:
    return max((s.version for s in (local, *tracked) if s is not None), default=0) + 1
