"""Structural verification of one log as read from one source: the first half of the read-union.

Checks seq continuity, author = ref owner = signer, the signature, the record schema and the size cap.
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


class Problem(NamedTuple):
    kind: str  # bad-signature | wrong-signer | malformed | seq-gap | wrong-log | future
    ref: str
    commit: str
    seq: int | None
    detail: str


class Verified(NamedTuple):
    """Entries that verified, oldest first, and the problem that stopped the walk (if any)."""

    entries: list[logs.Entry]
    problem: Problem | None


def check_entry(team_id: str, owner: str, log: str, entry: logs.Entry, expected_seq: int | None,
                ref: str = "", now: int | None = None) -> Problem | None:
    """Why ``entry`` cannot be part of ``owner``'s ``log`` at ``expected_seq`` (None if it can)."""
    body, env = entry.body, entry.signed

    def problem(kind: str, detail: str) -> Problem:
        return Problem(kind, ref, entry.commit, body.get("seq"), detail)

    if body["at"] > (now if now is not None else now_ms()) + MAX_SKEW_MS:
        return problem("future", "entry is stamped more than a day in the future; it is refused until then")
    if body["author"] != owner or env["by"] != owner:
        return problem("wrong-signer", f"entry by {env['by'][:12]} in a log owned by {owner[:12]}")
    if body["log"] != log:
        return problem("wrong-log", f"entry for log {body['log']!r} in log {log!r}")
    if expected_seq is not None and body["seq"] != expected_seq:
        return problem("seq-gap", f"seq {body['seq']} where {expected_seq} was expected")
    ok = (signed.signature_ok_raw(team_id, body["record"]["type"], env["by"], env["sig"], entry.body_bytes)
          if entry.raw else signed.signature_ok(team_id, body["record"]["type"], env))
    if not ok:
        return problem("bad-signature", "signature does not verify")
    return None


def verify_chain(
    repo: pygit2.Repository,
    team_id: str,
    ref: str,
    owner: str,
    log: str,
    tip: str,
    known: Callable[[str], int | None],
) -> tuple[Verified, int | None]:
    """Verify the commits from ``tip`` back to the first one ``known`` recognises (seq of a verified commit).

    Returns the new entries that verify, in order, with the first problem found; and the seq of the known
    commit the walk stopped at (None if it reached the root).
    """
    chain: list[logs.Entry] = []
    base_seq: int | None = None
    malformed: Problem | None = None
    oid: str | None = tip
    while oid:
        seen = known(oid)
        if seen is not None:
            base_seq = seen
            break
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
    good: list[logs.Entry] = []
    expected = (base_seq or 0) + 1
    now = now_ms()
    for entry in chain:
        problem = check_entry(team_id, owner, log, entry, expected, ref, now)
        if problem:
            return Verified(good, problem), base_seq
        good.append(entry)
        expected += 1
    return Verified(good, malformed), base_seq


def _parent(repo: pygit2.Repository, oid: str) -> str | None:
    """The first parent of a commit that is not a well-formed entry (None if it is not a commit at all)."""
    try:
        commit = repo[oid]
    except (KeyError, ValueError):
        return None
    if not isinstance(commit, pygit2.Commit) or not commit.parent_ids:
        return None
    return str(commit.parent_ids[0])
