"""Draft commits: the anchor's prepared work, one commit over its base, signed by the anchor's machine key.

A draft's message ends with two trailers:

```
Hive-Anchor: <anchor machine id>
Hive-Sig: <hex ed25519 over "hive/1/<team-id>/draft/" + canonical({tree, parents, message})>
```

where ``message`` is the commit message up to (not including) the ``Hive-Sig`` line. The signature binds the
tree and the parents, so the trailer cannot be copied onto other content; the author and committer are the
anchor's fixed identity (:func:`identity`). The server guard (``store/guard.py``, its anchor option) accepts
new commits on ``refs/heads/hive/*`` only with a valid signature by an anchor machine, and a draft (any commit
carrying the anchor's identity) on any other branch or tag only in a push the anchor certified
(``store/pushcert.py``).
"""

from __future__ import annotations

import re
from typing import NamedTuple

import pygit2
from nacl.signing import SigningKey

from gitive.core import canonical, signed
from gitive.core.ids import is_machine_id
from gitive.core.keys import machine_id, verify

KIND = "draft"
ANCHOR_TRAILER = "Hive-Anchor"
SIG_TRAILER = "Hive-Sig"
EMAIL_DOMAIN = "gitive.invalid"
_ANCHOR_EMAIL = re.compile(r"^anchor\+[0-9a-f]{12}@gitive\.invalid$")
_SIG_LINE = re.compile(r"^Hive-Sig: ([0-9a-f]{128})\n?\Z", re.MULTILINE)
_ANCHOR_LINE = re.compile(r"^Hive-Anchor: ([0-9a-f]{64})$", re.MULTILINE)


class Signer(NamedTuple):
    key: SigningKey
    team_id: str


def identity(machine: str) -> tuple[str, str]:
    """The anchor's git identity: the same on every draft of that machine."""
    return "gitive anchor", f"anchor+{machine[:12]}@{EMAIL_DOMAIN}"


def _signed_bytes(team_id: str, tree: str, parents: list[str], message: str) -> bytes:
    return signed.domain(team_id, KIND) + canonical.dumps({"tree": tree, "parents": parents, "message": message})


def make(repo: pygit2.Repository, signer: Signer, tree: str, parents: list[str], text: str, at: int) -> str:
    """Write a signed draft commit (no ref moves) and return its id.

    Args:
        repo: where the objects go.
        signer: the anchor's machine key and team.
        tree: the draft's tree id.
        parents: its parent commits (the base).
        text: the message without trailers.
        at: the commit time, ms since the epoch.
    """
    me = machine_id(signer.key)
    message = f"{text.rstrip()}\n\n{ANCHOR_TRAILER}: {me}\n"
    sig = signer.key.sign(_signed_bytes(signer.team_id, tree, parents, message)).signature.hex()
    message += f"{SIG_TRAILER}: {sig}\n"
    name, email = identity(me)
    who = pygit2.Signature(name, email, at // 1000, 0)
    return str(repo.create_commit(None, who, who, message, pygit2.Oid(hex=tree),
                                  [pygit2.Oid(hex=p) for p in parents]))


def signer_of(commit: pygit2.Commit, team_id: str) -> str | None:
    """The anchor machine whose valid draft signature ``commit`` carries, or None."""
    message = commit.message
    sig = _SIG_LINE.search(message)
    if sig is None:
        return None
    before = message[:sig.start()]
    found = _ANCHOR_LINE.findall(before)
    if len(found) != 1 or not is_machine_id(found[0]):
        return None
    data = _signed_bytes(team_id, str(commit.tree_id), [str(p) for p in commit.parent_ids], before)
    return found[0] if verify(found[0], data, sig.group(1)) else None


def carries_anchor_identity(commit: pygit2.Commit) -> bool:
    """Whether ``commit`` claims to be the anchor's: its trailer, or the anchor's author or committer email."""
    return bool(_ANCHOR_LINE.search(commit.message)) or any(
        _ANCHOR_EMAIL.match(who.email or "") for who in (commit.author, commit.committer))


def new_commits(repo: pygit2.Repository, tip: str, known: list[str], limit: int = 10_000) -> list[pygit2.Commit]:
    """Commits reachable from ``tip`` and from none of ``known`` (the tips a repository already has)."""
    walker = repo.walk(pygit2.Oid(hex=tip), pygit2.enums.SortMode.TOPOLOGICAL)
    for oid in known:
        try:
            walker.hide(pygit2.Oid(hex=oid))
        except (KeyError, ValueError, pygit2.GitError):
            continue
    out = []
    for commit in walker:
        out.append(commit)
        if len(out) >= limit:
            break
    return out
