"""What an attacker who can push anything to the remote builds: junk chains, forged and re-wrapped entries.

Everything is written as real git objects (pygit2, or ``git fast-import`` for long chains); no ref of an honest
machine is touched unless a test pushes the result itself.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pygit2

from gitive.core import canonical, signed
from gitive.store import logs


def junk_chain(repo: Path | str, ref: str, length: int, *, malformed_root: bool = True,
               entry: bytes | None = None) -> str:
    """Write a ``length``-commit chain under ``ref`` with ``git fast-import`` (one pack, fast); return its tip.

    Every commit holds ``entry.json`` = ``entry`` (default: bytes that are no entry at all); with
    ``malformed_root`` the root commit holds a second file too, so even a valid entry above it is unusable.
    """
    data = entry if entry is not None else b'{"body":"junk"}'
    out = bytearray()
    for i in range(1, length + 1):
        message = f"junk {i}\n".encode()
        out += f"commit {ref}\nmark :{i}\ncommitter x <x@x> {1_700_000_000 + i} +0000\n".encode()
        out += f"data {len(message)}\n".encode() + message
        if i > 1:
            out += f"from :{i - 1}\n".encode()
        out += f"M 100644 inline entry.json\ndata {len(data)}\n".encode() + data + b"\n"
        if i == 1 and malformed_root:
            out += b"M 100644 inline extra\ndata 1\nx\n"
        out += b"\n"
    out += b"done\n"
    subprocess.run(["git", "fast-import", "--quiet", "--done", "--force"], cwd=repo, input=bytes(out),
                   check=True, capture_output=True)
    return subprocess.run(["git", "rev-parse", ref], cwd=repo, check=True, capture_output=True,
                          text=True).stdout.strip()


def rewrap(repo: pygit2.Repository, entry: logs.Entry, *, message: str = "rewrapped\n",
           parent: str | None = None) -> str:
    """The same signed entry bytes in a commit that is not its canonical form (another message)."""
    builder = repo.TreeBuilder()
    builder.insert("entry.json", repo.create_blob(entry.raw), pygit2.enums.FileMode.BLOB)
    body = entry.body
    who = pygit2.Signature(body["author"][:16], f"{body['author']}@hive", body["at"] // 1000, 0)
    up = parent if parent is not None else entry.parent
    return str(repo.create_commit(None, who, who, message, builder.write(), [pygit2.Oid(hex=up)] if up else []))


def forged_entry(repo: pygit2.Repository, key: Any, team_id: str, body: dict[str, Any], parent: str | None, *,
                 claim: str | None = None) -> str:
    """An entry with ``body`` signed by ``key`` (claiming ``claim`` as signer if given), in canonical form."""
    env = signed.sign(key, team_id, body["record"]["type"], body)
    if claim:
        env["by"] = claim
    return logs.write_commit(repo, canonical.dumps(env), body, parent)


# --- an honest world written directly to a repository (no CLI), for forging thousands of variants ---------

class World:
    """A team in one repository, written with gitive's own writer: alice founds it and admits bob; alice's
    ``team`` log starts in format v1 (the old writer) and continues in v2; bob writes notes and citations.

    ``logs`` maps each honest log ref to its entries oldest first; ``keys`` holds every key an attacker may
    also use (bob's is a real member's key, mallory's is nobody's).
    """

    def __init__(self, repo: pygit2.Repository, team_id: str, at: int = 1_700_000_000_000) -> None:
        from testing.builders import machine

        self.repo, self.team_id, self.at = repo, team_id, at
        self.alice, self.bob, self.mallory = machine("world-alice"), machine("world-bob"), machine("world-mallory")
        self.founder = self.alice.id
        self.logs: dict[str, list[logs.Entry]] = {}
        a, b = self.alice, self.bob
        self._append(a, "roster", {"type": "team", "name": "world", "founder": a.id})
        self._append(a, "roster", self._member(a, "alice", {"via": "founder"}))
        self._append(a, "roster", self._member(b, "bob", None))
        for i in range(3):
            self._append(a, "team", {"type": "team", "name": f"old note {i}", "founder": a.id}, v1=True)
        for i in range(2):
            self._append(a, "team", {"type": "team", "name": f"note {i}", "founder": a.id})
        lesson = "ab" * 32
        for i in range(4):
            self._append(b, "team", {"type": "team", "name": f"bob note {i}", "founder": a.id})
            self._append(b, "team", {"type": "citation", "lesson": lesson, "session": f"s{i}", "success": True,
                                     "tests_passed": True, "reverted": False})

    def _member(self, who: Any, person: str, admission: dict[str, Any] | None) -> dict[str, Any]:
        record = {"type": "member", "machine": who.id, "person": person, "name": person, "role": "member",
                  "active": True, "emails": [], "ts": self.at}
        if admission is not None:
            record["admission"] = admission
        return record

    def _append(self, who: Any, log: str, record: dict[str, Any], *, v1: bool = False) -> logs.Entry:
        from gitive.store import refs

        ref = refs.log_ref(who.id, log)
        chain = self.logs.setdefault(ref, [])
        below = chain[-1] if chain else None
        self.at += 1000
        body: dict[str, Any] = {"author": who.id, "log": log, "scope": {"team": True}, "seq": len(chain) + 1,
                                "at": self.at, "record": record}
        if not v1:
            body = {"v": 2, **body, **({"prev": below.hash} if below else {})}
        data = canonical.dumps(signed.sign(who.key, self.team_id, record["type"], body))
        commit = logs.write_commit(self.repo, data, body, below.commit if below else None)
        entry = logs.read_entry(self.repo, commit)
        chain.append(entry)
        self.repo.references.create(ref, commit, force=True)
        return entry

    def owner(self, ref: str) -> Any:
        return next(m for m in (self.alice, self.bob, self.mallory) if m.id in ref)
