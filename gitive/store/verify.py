"""Verification of one log as read from one source: the first half of the read-union (docs/verification.md §1).

Per entry, in order: structure and canonical commit form (``logs.read_entry``), author = signer = the ref's
owner, the ref's log, seq and ``prev`` continuing the parent, authenticity, and a stamp not more than a day
ahead. Authenticity is by hash links: the signature at the top of what is new is checked, and each v2 entry
vouches for the one below it by naming its hash, so one signature authenticates a whole v2 chain. A v1 entry
vouches for nothing below it, so each v1 entry not named by a v2 one is checked by its own signature.

Roster admission is the second half and lives with the roster (``team.roster``), because who may sign
depends on entries from every machine.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import pygit2

from gitive.constants import MAX_SKEW_MS
from gitive.core import signed
from gitive.core.clock import now_ms
from gitive.errors import InvalidRecord
from gitive.store import logs

# Problems that say something about the chain itself, fixed until its tip moves; "future" clears with time.


class Problem(NamedTuple):
    kind: str  # one of CHAIN_PROBLEMS
    ref: str
    commit: str
    seq: int | None
    detail: str
    retry_at: int | None = None  # "future": when the entry may be read again


class Verified(NamedTuple):
    """Entries that verified, oldest first, the problem that stopped them (if any), and for each entry whether
    its own signature was checked (False: authenticated through the hash link of the entry above it)."""

    entries: list[logs.Entry]
    problem: Problem | None
    signature_checked: tuple[bool, ...] = ()
    stopped_at_refused: bool = False  # the walk reached a tip refused before: nothing new, problem unchanged


def signature_ok(team_id: str, entry: logs.Entry) -> bool:
    """Whether the entry's own signature verifies (by its ``by`` machine, for this team and record kind)."""
    env = entry.signed
    kind = env["body"]["record"]["type"]
    if entry.raw:
        return signed.signature_ok_raw(team_id, kind, env["by"], env["sig"], entry.body_bytes)
    return signed.signature_ok(team_id, kind, env)


def check_link(owner: str, log: str, entry: logs.Entry, below: logs.Entry | None, expected_seq: int | None,
               ref: str = "", now: int | None = None) -> Problem | None:
    """Why ``entry`` cannot follow ``below`` in ``owner``'s ``log`` (None if it can), authenticity aside.

    ``below`` is the entry under it (None at the root or when unknown); ``expected_seq`` None skips the seq check.
    """
    body, env = entry.body, entry.signed

    def problem(kind: str, detail: str, retry_at: int | None = None) -> Problem:
        return Problem(kind, ref, entry.commit, body.get("seq"), detail, retry_at)

    if body["author"] != owner or env["by"] != owner:
        return problem("wrong-signer", f"entry by {env['by'][:12]} in a log owned by {owner[:12]}")
    if body["log"] != log:
        return problem("wrong-log", f"entry for log {body['log']!r} in log {log!r}")
    if expected_seq is not None and body["seq"] != expected_seq:
        return problem("seq-gap", f"seq {body['seq']} where {expected_seq} was expected")
    if below is not None:
        if entry.version == 1 and below.version != 1:
            return problem("malformed", "a v1 entry above a v2 entry: an honest writer never goes back")
        if entry.version != 1 and body.get("prev") != below.hash:
            return problem("bad-link", f"prev does not name the entry below it ({below.commit[:12]})")
    cutoff = (now if now is not None else now_ms()) + MAX_SKEW_MS
    if body["at"] > cutoff:
        return problem("future", "entry is stamped more than a day in the future; it is refused until then",
                       body["at"] - MAX_SKEW_MS)
    return None


def check_entry(team_id: str, owner: str, log: str, entry: logs.Entry, expected_seq: int | None,
                ref: str = "", now: int | None = None, below: logs.Entry | None = None) -> Problem | None:
    """Why ``entry`` cannot be part of ``owner``'s ``log`` at ``expected_seq`` on its own signature (None if it
    can): :func:`check_link` and then the entry's own signature."""
    problem = check_link(owner, log, entry, below, expected_seq, ref, now)
    if problem is None and not signature_ok(team_id, entry):
        problem = Problem("bad-signature", ref, entry.commit, entry.body.get("seq"), "signature does not verify")
    return problem


def authenticate(team_id: str, chain: list[logs.Entry], ref: str = "") -> tuple[int, list[bool], Problem | None]:
    """Find how much of ``chain`` (oldest first, links already checked) is authentic, from the top down.

    Returns the length of the authentic prefix, which entries had their own signature checked, and the
    bad-signature problem at the lowest entry that is not authentic (None when all are).
    """
    checked = [False] * len(chain)
    lowest_bad: int | None = None
    vouched = False  # the entry above is authentic and names this one by prev
    for i in range(len(chain) - 1, -1, -1):
        entry = chain[i]
        if vouched:
            authentic = True
        else:
            checked[i] = True
            authentic = signature_ok(team_id, entry)
            if not authentic:
                lowest_bad = i
        vouched = authentic and entry.version != 1
    if lowest_bad is None:
        return len(chain), checked, None
    bad = chain[lowest_bad]
    return lowest_bad, checked[:lowest_bad], Problem("bad-signature", ref, bad.commit, bad.seq,
                                                     "signature does not verify")


def verify_chain(
    repo: pygit2.Repository,
    team_id: str,
    ref: str,
    owner: str,
    log: str,
    tip: str,
    known: Callable[[str], int | None],
    *,
    refused: str | None = None,
    now: int | None = None,
) -> tuple[Verified, int | None]:
    """Verify the commits from ``tip`` back to the first one ``known`` recognises (seq of a verified commit).

    Args:
        refused: a tip of this ref refused before; when the walk reaches it, nothing above it can be used and
            what lies below was read then, so the walk stops with ``stopped_at_refused``.
        now: the reader's clock (milliseconds), for the one-day skew.

    Returns:
        The new entries that verify, in order, with the lowest problem found; and the seq of the known commit
        the walk stopped at (None if it reached the root).
    """
    chain: list[logs.Entry] = []
    base_seq: int | None = None
    base: str | None = None
    malformed: Problem | None = None
    oid: str | None = tip
    while oid:
        seen = known(oid)
        if seen is not None:
            base_seq, base = seen, oid
            break
        if oid == refused:
            return Verified([], None, (), True), None
        try:
            entry = logs.read_entry(repo, oid)
        except InvalidRecord as exc:
            # Nothing above a malformed commit can be verified, but what lies below it still can: every
            # reader then agrees on the same prefix, whenever it first saw the log.
            malformed = Problem("malformed", ref, oid, None, str(exc))
            chain.clear()
            oid = _parent(repo, oid)
            continue
        chain.append(entry)
        oid = entry.parent
    chain.reverse()
    below = _base_entry(repo, base)
    expected = (base_seq or 0) + 1
    now = now if now is not None else now_ms()
    problem: Problem | None = None
    for i, entry in enumerate(chain):
        problem = check_link(owner, log, entry, below, expected, ref, now)
        if problem:
            del chain[i:]
            break
        below = entry
        expected += 1
    good, checked, unsigned = authenticate(team_id, chain, ref)
    return Verified(chain[:good], unsigned or problem or malformed, tuple(checked)), base_seq


def _base_entry(repo: pygit2.Repository, base: str | None) -> logs.Entry | None:
    """The verified entry a walk stopped at, so the first new entry's ``prev`` and version can be checked."""
    if base is None:
        return None
    try:
        return logs.read_entry(repo, base)
    except InvalidRecord:
        return None  # a commit the index knows as verified is well-formed; a lost object shows up elsewhere


def _parent(repo: pygit2.Repository, oid: str) -> str | None:
    """The first parent of a commit that is not a well-formed entry (None if it is not a commit at all)."""
    try:
        commit = repo[oid]
    except (KeyError, ValueError):
        return None
    if not isinstance(commit, pygit2.Commit) or not commit.parent_ids:
        return None
    return str(commit.parent_ids[0])
