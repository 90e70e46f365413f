"""Append-only signed logs stored as commit chains under ``refs/hive/logs/<machine>/<log>``.

One entry per commit: the tree holds only ``entry.json`` (the canonical ``Signed<LogEntry>``), the parent is
the previous entry, and author, committer and message derive from the entry alone, so the same entry has the
same commit id on every machine. That canonical commit form is built by one function (:func:`commit_bytes`)
that the writer and the reader share: a commit that is not exactly those bytes is malformed, never another
copy of the entry (docs/verification.md §1). Nothing here touches a working tree or the git index.
"""

from __future__ import annotations

import hashlib
import random
import re
import time
from collections.abc import Iterator
from typing import Any, NamedTuple

import blake3
import pygit2
from nacl.signing import SigningKey

from gitive.constants import CAS_RETRIES, ENTRY_FILE, MAX_ENTRY_BYTES
from gitive.core import canonical, records, signed
from gitive.core.clock import now_ms
from gitive.core.ids import is_machine_id
from gitive.core.keys import machine_id
from gitive.errors import InvalidRecord, RaceLost
from gitive.store import refs

_OBJ = pygit2.enums.ObjectType
_TREE_PREFIX = f"100644 {ENTRY_FILE}\0".encode()
_ENVELOPE_KEYS = frozenset({"body", "by", "sig"})
# Lowercase only: bytes.fromhex reads "AB" as "ab", and two spellings of one signature would be two entries.
_SIG = re.compile(r"[0-9a-f]{128}")


def entry_hash(data: bytes) -> str:
    """An entry's identity: blake3 hex of its stored ``entry.json`` bytes (what a later entry's ``prev`` names)."""
    return blake3.blake3(data).hexdigest()


class Entry(NamedTuple):
    """A log entry as read from git: its commit, the signed envelope and the entry body."""

    commit: str
    parent: str | None
    signed: dict[str, Any]
    raw: bytes = b""  # the canonical envelope as stored
    digest: str = ""  # entry_hash(raw), when the reader computed it already

    @property
    def hash(self) -> str:
        return self.digest or entry_hash(self.raw)

    @property
    def version(self) -> int:
        return self.signed["body"].get("v", 1)

    @property
    def body_bytes(self) -> bytes:
        """Canonical bytes of the body, cut from the stored envelope (keys sort as body, by, sig)."""
        return self.raw[len(b'{"body":'):self.raw.rindex(b',"by":"')]

    @property
    def body(self) -> dict[str, Any]:
        return self.signed["body"]

    @property
    def seq(self) -> int:
        return self.signed["body"]["seq"]

    @property
    def kind(self) -> str:
        return self.signed["body"]["record"]["type"]


def summary(entry: dict[str, Any]) -> str:
    """The one-line commit message that makes ``git log refs/hive/logs/...`` readable.

    Part of the canonical commit form: changing what it prints for an existing record kind makes every stored
    commit of that kind malformed. A new kind may add its own detail.
    """
    record = entry["record"]
    detail = ""
    if record["type"] == "member":
        state = "active" if record["active"] else "inactive"
        detail = f" {record['person']}/{record['name']} {record['machine'][:12]} {state}"
    elif isinstance(record.get("id"), str):
        detail = f" {record['id'][:12]}"
    return f"{entry['log']} #{entry['seq']}: {record['type']}{detail}"


def tree_bytes(blob: pygit2.Oid) -> bytes:
    """The canonical tree object of an entry: one ``100644 entry.json`` pointing at ``blob``."""
    return _TREE_PREFIX + blob.raw


def commit_bytes(tree: str, parent: str | None, entry: dict[str, Any]) -> bytes:
    """The canonical commit object of ``entry`` (its body) on ``parent``: what the writer stores and the reader
    rebuilds and compares. Author and committer are ``<author[:16]> <<author>@hive> <at // 1000> +0000``, the
    message is :func:`summary` and a newline; nothing else (no encoding, no signature, no second parent)."""
    who = f"{entry['author'][:16]} <{entry['author']}@hive> {entry['at'] // 1000} +0000"
    head = f"tree {tree}\n" + (f"parent {parent}\n" if parent else "")
    return f"{head}author {who}\ncommitter {who}\n\n{summary(entry)}\n".encode()


def write_commit(repo: pygit2.Repository, data: bytes, entry: dict[str, Any], parent: str | None) -> str:
    """Write blob, tree and commit objects of one entry (no ref moves); return the commit id."""
    odb = repo.odb
    tree = odb.write(_OBJ.TREE, tree_bytes(odb.write(_OBJ.BLOB, data)))
    return str(odb.write(_OBJ.COMMIT, commit_bytes(str(tree), parent, entry)))


def _object_id(kind: bytes, data: bytes, size: int) -> bytes:
    """The git object id of ``data`` as an object of ``kind`` (SHA-1, or SHA-256 in a repository using it)."""
    hasher = hashlib.sha1 if size == 20 else hashlib.sha256
    return hasher(kind + b" %d\0" % len(data) + data).digest()


_CLAIMED_SEQ = re.compile(r"#(\d{1,18}): ")


def claimed_seq(repo: pygit2.Repository, oid: str) -> int | None:
    """The seq an entry commit's message claims (:func:`summary`), reading only the commit: for estimates of
    how much there is to read, never for a decision (None: not a commit, or no such claim)."""
    try:
        commit = repo[oid]
    except (KeyError, ValueError, pygit2.GitError):
        return None
    found = _CLAIMED_SEQ.search(commit.message) if isinstance(commit, pygit2.Commit) else None
    return int(found.group(1)) if found else None


def read_entry(repo: pygit2.Repository, oid: str) -> Entry:
    """Read and structurally check one entry commit, canonical commit form included (not its signature or its
    place in the chain: see ``store.verify``).

    The canonical form is checked by rebuilding the tree and commit objects the entry determines and comparing
    their ids with the ones read: equal ids are equal bytes.

    Raises:
        InvalidRecord: the commit is not a well-formed hive entry in canonical form.
    """
    try:
        commit = repo[oid]
    except (KeyError, ValueError, pygit2.GitError):
        raise InvalidRecord(f"object {oid} is missing") from None
    if not isinstance(commit, pygit2.Commit):
        raise InvalidRecord(f"{oid} is not a commit")
    parents = commit.parent_ids
    if len(parents) > 1:
        raise InvalidRecord(f"{oid} has more than one parent")
    tree = commit.tree
    if len(tree) != 1 or (item := tree[0]).name != ENTRY_FILE:
        raise InvalidRecord(f"{oid} does not hold exactly one {ENTRY_FILE}")
    blob = repo[item.id]
    if not isinstance(blob, pygit2.Blob):
        raise InvalidRecord(f"{oid} does not hold exactly one {ENTRY_FILE}")
    # A pushed blob is at most what the remote let through: read it, then refuse it when it is too big.
    data = blob.data
    if len(data) > MAX_ENTRY_BYTES:
        raise InvalidRecord(f"{oid} entry is {len(data)} bytes, over the {MAX_ENTRY_BYTES} cap")
    parent = str(parents[0]) if parents else None
    try:
        env = canonical.loads_canonical(data)
        if (not isinstance(env, dict) or env.keys() != _ENVELOPE_KEYS or not is_machine_id(env["by"])
                or not isinstance(env["sig"], str) or not _SIG.fullmatch(env["sig"])):
            raise InvalidRecord(f"{oid} entry is not a signed envelope")
        records.check_entry(env["body"], within=len(data))
        tree_id = commit.tree_id
        size = len(tree_id.raw)
        canonical_form = (_object_id(b"tree", tree_bytes(item.id), size) == tree_id.raw and _object_id(
            b"commit", commit_bytes(str(tree_id), parent, env["body"]), size) == commit.id.raw)
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
        # Whatever a peer wrote, reading it must end in a refusal, never a crash of every reader.
        raise InvalidRecord(f"{oid} entry is malformed: {type(exc).__name__}") from None
    if not canonical_form:
        raise InvalidRecord(f"{oid} is not in canonical commit form (its message, times, identity or headers "
                            "differ from what its entry determines)")
    return Entry(oid, parent, env, data, entry_hash(data))


def append(
    repo: pygit2.Repository,
    key: SigningKey,
    team_id: str,
    log: str,
    scope: dict[str, Any],
    record: dict[str, Any],
    *,
    at: int | None = None,
) -> Entry:
    """Sign ``record`` and append it to this machine's ``log`` as a v2 entry linked to the previous one.

    The ref moves by compare-and-swap from the tip this call read; on a race the entry is rebuilt on the new
    tip (next seq) and tried again, so parallel writers never lose an entry or leave a gap.

    Raises:
        InvalidRecord: the record fails its schema or the size cap; nothing was written.
        RaceLost: other writers won every one of ``CAS_RETRIES`` attempts.
    """
    kind = records.check_record(record)
    author = machine_id(key)
    name = refs.log_ref(author, log)
    for attempt in range(CAS_RETRIES):
        old = refs.tip(repo, name)
        seq, link = _tip_link(repo, old) if old else (0, None)
        stamp = at if at is not None else now_ms()
        entry = {"v": records.ENTRY_VERSION, "author": author, "log": log, "scope": scope,
                 "seq": seq + 1, "at": stamp, "record": record}
        if link:  # a v1 log continues in v2 here: its first v2 entry links the last v1 one like any other
            entry["prev"] = link
        records.check_entry(entry)
        envelope = signed.sign(key, team_id, kind, entry)
        data = canonical.dumps(envelope)
        if len(data) > MAX_ENTRY_BYTES:
            raise InvalidRecord(f"entry is {len(data)} bytes, over the {MAX_ENTRY_BYTES} cap")
        commit = write_commit(repo, data, entry, old)
        if refs.set_if_equals(repo, name, old, commit, f"gitive: {summary(entry)}"):
            written = Entry(commit, old, envelope, data, entry_hash(data))
            _remember_tip(commit, written.seq, written.hash)
            return written
        time.sleep(random.uniform(0.001, 0.005) * (1 + attempt))
    raise RaceLost(f"could not append to {name}: other writers kept moving it; try again")


BATCH_MIN = 16  # below this, one commit per entry through libgit2 costs less than starting git fast-import


def append_many(
    repo: pygit2.Repository,
    key: SigningKey,
    team_id: str,
    log: str,
    scope: dict[str, Any],
    batch: list[dict[str, Any]],
    *,
    at: int | None = None,
) -> list[Entry]:
    """Sign every record of ``batch`` and append them, in order, to this machine's ``log`` with one ref move.

    The entries are exactly what :func:`append` would write one by one (same bytes, same commit ids); a large
    batch goes through ``git fast-import``, which writes one pack instead of three loose objects per entry (on
    a loaded disk each loose object costs milliseconds: the gate's ledger writes thousands of entries a tick).
    Atomic: the ref moves by compare-and-swap once, so either every entry of the batch is in the log or none.

    Raises:
        InvalidRecord: a record fails its schema or the size cap; nothing was written.
        RaceLost: other writers won every one of ``CAS_RETRIES`` attempts.
    """
    if len(batch) == 1:
        return [append(repo, key, team_id, log, scope, batch[0], at=at)]
    author = machine_id(key)
    name = refs.log_ref(author, log)
    for attempt in range(CAS_RETRIES):
        old = refs.tip(repo, name)
        seq, link = _tip_link(repo, old) if old else (0, None)
        stamp = at if at is not None else now_ms()
        built: list[tuple[dict[str, Any], dict[str, Any], bytes]] = []
        for record in batch:
            seq += 1
            entry = {"v": records.ENTRY_VERSION, "author": author, "log": log, "scope": scope, "seq": seq,
                     "at": stamp, "record": record}
            if link:  # as append: each entry names the previous one's hash
                entry["prev"] = link
            kind = records.check_entry(entry)  # the record's checks too; all before anything is written
            # The envelope's canonical bytes are {"body":…,"by":…,"sig":…} (keys sorted): built from the body's
            # bytes, checked once, rather than checking and encoding the whole envelope again.
            body = canonical.dumps(entry)
            sig = key.sign(signed.domain(team_id, kind) + body).signature.hex()
            data = b'{"body":%s,"by":"%s","sig":"%s"}' % (body, author.encode(), sig.encode())
            if len(data) > MAX_ENTRY_BYTES:
                raise InvalidRecord(f"entry is {len(data)} bytes, over the {MAX_ENTRY_BYTES} cap")
            built.append((entry, {"body": entry, "by": author, "sig": sig}, data))
            link = entry_hash(data)
        commits = _import(repo, built, old) if len(built) >= BATCH_MIN else _write_chain(repo, built, old)
        if refs.set_if_equals(repo, name, old, commits[-1], f"gitive: {summary(built[-1][0])} (+{len(built) - 1})"):
            parents = [old, *commits[:-1]]
            _remember_tip(commits[-1], built[-1][0]["seq"], link)
            return [Entry(c, p, env, data, entry_hash(data))
                    for c, p, (_, env, data) in zip(commits, parents, built, strict=True)]
        time.sleep(random.uniform(0.001, 0.005) * (1 + attempt))
    raise RaceLost(f"could not append to {name}: other writers kept moving it; try again")


_TIPS: dict[str, tuple[int, str]] = {}  # entry commit id -> (seq, entry hash), of entries this process wrote


def _tip_link(repo: pygit2.Repository, oid: str) -> tuple[int, str]:
    """(seq, hash) of the entry at a log's tip: remembered when this process wrote it (a commit id names its
    bytes, so the answer cannot go stale), else read and checked. A writer that appends every tick (the gate's
    ledger: 64 KiB batches) no longer re-parses its own last entry each time."""
    known = _TIPS.get(oid)
    if known is not None:
        return known
    prev = read_entry(repo, oid)
    return prev.seq, prev.hash


def _remember_tip(oid: str, seq: int, entry_hash_: str) -> None:
    if len(_TIPS) >= 1024:
        _TIPS.clear()
    _TIPS[oid] = (seq, entry_hash_)


def _write_chain(repo: pygit2.Repository, built: list[tuple[dict[str, Any], dict[str, Any], bytes]],
                 parent: str | None) -> list[str]:
    """A short batch's commits through libgit2, each on the one before (no ref moves); their ids."""
    out = []
    for entry, _, data in built:
        parent = write_commit(repo, data, entry, parent)
        out.append(parent)
    return out


def _import(repo: pygit2.Repository, built: list[tuple[dict[str, Any], dict[str, Any], bytes]],
            parent: str | None) -> list[str]:
    """Write the entries' blobs, trees and commits with ``git fast-import`` (no ref of ours moves); their ids.

    The commits have the canonical form :func:`_write_commit` gives (one ``entry.json``, author and committer
    from the entry, the summary line): fast-import writes exactly the headers and message it is given.
    """
    import os
    import tempfile

    from gitive.store import git

    scratch = f"refs/hive-scratch/import-{os.getpid()}-{random.getrandbits(32):08x}".encode()
    parts: list[bytes] = []
    for i, (entry, _, data) in enumerate(built):
        who = f"{entry['author'][:16]} <{entry['author']}@hive> {entry['at'] // 1000} +0000".encode()
        message = (summary(entry) + "\n").encode()
        parts.append(b"blob\nmark :%d\ndata %d\n%s\n" % (2 * i + 1, len(data), data))
        parts.append(b"commit %s\nmark :%d\nauthor %s\ncommitter %s\ndata %d\n%s" % (
            scratch, 2 * i + 2, who, who, len(message), message))
        if i:
            parts.append(b"from :%d\n" % (2 * i))
        elif parent:
            parts.append(b"from %s\n" % parent.encode())
        parts.append(b"deleteall\nM 100644 :%d %s\n\n" % (2 * i + 1, ENTRY_FILE.encode()))
    fd, marks = tempfile.mkstemp(prefix="gitive-marks-")
    os.close(fd)
    try:
        # fast-import moves only the scratch ref it was given; it is deleted at once (the caller moves the log)
        git.run(["fast-import", "--quiet", "--date-format=raw", f"--export-marks={marks}"], cwd=repo.path,
                input=b"".join(parts))
        with open(marks) as fh:
            found = dict(line.split() for line in fh if line.strip())
    finally:
        os.unlink(marks)
        refs.delete(repo, scratch.decode())
    return [found[f":{2 * i + 2}"] for i in range(len(built))]


def walk(repo: pygit2.Repository, tip: str, stop: str | None = None) -> Iterator[Entry]:
    """Yield entries from ``tip`` back towards the root, stopping before ``stop``.

    Raises:
        InvalidRecord: a commit on the way is malformed.
    """
    oid: str | None = tip
    while oid and oid != stop:
        entry = read_entry(repo, oid)
        yield entry
        oid = entry.parent


def entries(repo: pygit2.Repository, ref: str) -> list[Entry]:
    """All entries of ``ref`` in seq order (empty if the ref does not exist)."""
    head = refs.tip(repo, ref)
    return list(reversed(list(walk(repo, head)))) if head else []
