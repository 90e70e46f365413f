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
