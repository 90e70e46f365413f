"""Watching a project's branches and tags as a remote has them, so ref movements become events.

The anchor fetches a remote's hive refs, branches and tags in one ``git fetch`` (one network round, the same
cost as a bare fetch of those refs). Branches and tags land under ``refs/hive-watch/<remote>/heads|tags/*``,
never over the user's own ``refs/remotes/*`` or tags, and with ``--prune`` so a deleted branch is seen. A merge
made on a git host reaches nobody's hook: it shows only as branch X's tip becoming reachable from branch Y,
which :func:`movements` finds by comparing two snapshots of the watched tips.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import pygit2

from gitive.constants import REMOTES_REF_PREFIX
from gitive.errors import GitCommandError, RemoteError
from gitive.store import git, refs
from gitive.store import repo as repos
from gitive.store.sync import _reach_error, fetch_refspec

WATCH_PREFIX = "refs/hive-watch/"
MAX_WALK = 10_000  # first-parent steps searched for the merge commit


def watch_prefix(remote: str) -> str:
    return f"{WATCH_PREFIX}{remote}/"


def refspecs(remote: str) -> list[str]:
    """Hive refs, branches and tags of ``remote``, each to its own local namespace."""
    prefix = watch_prefix(remote)
    return [fetch_refspec(remote), f"+refs/heads/*:{prefix}heads/*", f"+refs/tags/*:{prefix}tags/*"]


def fetch_all(repo: pygit2.Repository, remote: str, timeout: float = 300, known: dict[str, str] | None = None
              ) -> dict[str, str]:
    """Fetch ``remote``'s hive refs, branches and tags in one command; return every ref's tip afterwards.

    git prunes per command, not per refspec: a hive ref the remote dropped would be pruned too, where a plain
    hive fetch keeps its last copy (the reader keeps what it verified, and reports the rollback). Such a ref is
    put back at the tip it had, so the hive side behaves exactly as :func:`gitive.store.sync.fetch`. ``known``
    is what this function returned last time, when nothing else fetched since: it saves listing the refs first.

    Raises:
        RemoteError: the remote does not exist or cannot be reached.
    """
    url = repos.remote_url(repo, remote)
    if url is None:
        raise RemoteError(f"no remote named {remote!r}; see `git remote -v`")
    hive = f"{REMOTES_REF_PREFIX}{remote}/"
    before = {n: t for n, t in (known if known is not None else refs.tips(repo, hive)).items() if n.startswith(hive)}
    try:
        git.run(["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--prune", remote, *refspecs(remote)],
                cwd=repo.path, timeout=timeout)
    except GitCommandError as exc:
        raise _reach_error(remote, url, exc) from None
    after = refs.tips(repo, "refs/")
    for name, tip in before.items():
        if name not in after and tip in repo:
            refs.force_set(repo, name, tip, "gitive: keep the last fetched copy")
            after[name] = tip
    return after


def tips(repo: pygit2.Repository, remote: str, snapshot: dict[str, str] | None = None) -> dict[str, str]:
    """``heads/<branch>`` and ``tags/<tag>`` -> the commit id, as last fetched from ``remote`` (read from
    ``snapshot``, every ref's tip, when the caller has one)."""
    prefix = watch_prefix(remote)
    found = snapshot if snapshot is not None else refs.tips(repo, prefix)
    out = {}
    for name, oid in found.items():
        if not name.startswith(prefix):
            continue
        rest = name[len(prefix):]
        if rest.startswith("tags/"):
            oid = _peel(repo, oid)
        out[rest] = oid
    return out


def _peel(repo: pygit2.Repository, oid: str) -> str:
    """An annotated tag's commit; anything else as it is."""
    try:
        return str(repo[oid].peel(pygit2.Commit).id)
    except (KeyError, ValueError, pygit2.GitError):
        return oid


class Movement(NamedTuple):
    action: str  # branch_created | branch_moved | branch_deleted | tag_created | merged
    name: str  # the branch or tag
    commit: str | None  # the new tip; for merged, the merge commit on ``into``
    previous: str | None = None
    into: str | None = None
    tip: str | None = None  # merged: the tip of ``name`` that became reachable
    forced: bool = False
    at: int | None = None  # commit time (ms) of ``commit``, if known


def _descends(repo: pygit2.Repository, new: str, old: str) -> bool:
    """``old`` is reachable from ``new`` (or the same commit)."""
    if new == old:
        return True
    try:
        return bool(repo.descendant_of(new, old))
    except (KeyError, ValueError, pygit2.GitError):
        return False


def commit_time(repo: pygit2.Repository, oid: str | None) -> int | None:
    """When ``oid`` was committed, in ms: the end of its second (git keeps whole seconds), so a commit made in
    the same second as a record stamped in ms does not look older than it."""
    try:
        return int(repo[oid].commit_time) * 1000 + 999 if oid else None
    except (KeyError, ValueError, AttributeError):
        return None


def first_parent_line(repo: pygit2.Repository, new: str, old: str | None) -> list[str]:
    """``new`` and its first parents, newest first, up to (not including) ``old``, a root, a commit that cannot
    be read, or :data:`MAX_WALK` commits."""
    line, oid = [], new
    for _ in range(MAX_WALK):
        if oid == old:
            break
        try:
            parents = repo[oid].parent_ids
        except (KeyError, ValueError):
            break
        line.append(oid)
        if not parents:
            break
        oid = str(parents[0])
    return line or [new]


def merge_commit(repo: pygit2.Repository, new: str, tip: str, old: str | None, line: list[str] | None = None
                 ) -> str:
    """The commit on ``new``'s first-parent line where ``tip`` became reachable (``tip`` itself if fast-forward).

    ``tip`` is reachable from ``new`` (the caller checked). Along the line, reachability only stops once: a commit
    reaches whatever its first parent reaches. So the answer is the oldest commit of the line that reaches
    ``tip``, found by bisection: a few reachability queries per merged branch, not one per commit of the line
    (a day of merges into one branch cost a query per merge per merge). ``line`` is
    :func:`first_parent_line`, when the caller has it for several tips."""
    line = line if line is not None else first_parent_line(repo, new, old)
    low, high = 0, len(line) - 1  # line[low] reaches tip; the answer is in [low, high]
    while low < high:
        middle = (low + high + 1) // 2
        if line[middle] == tip or _descends(repo, line[middle], tip):
            low = middle
        else:
            high = middle - 1
    return line[low]


def movements(repo: pygit2.Repository, before: dict[str, str], after: dict[str, str]) -> list[Movement]:
    """What changed between two snapshots of :func:`tips`, merges included, in a stable order.

    Branch X counts as merged into Y when Y moved and X's tip (its new tip, or its last tip if X was deleted
    in the same interval, as a host does after merging a pull request) is reachable from Y's new tip but was
    not from Y's old one. A branch first seen in this interval counts only when its tip came in through a merge
    commit (not on Y's first-parent line): one created on a commit Y merely moved past was not merged. A branch
    never seen at all (pushed, merged and deleted between two fetches) is found from the merge commit's message
    when it reads as git's, GitHub's or GitLab's ("Merge branch 'x'", "Merge pull request #7 from o/x").
    Squash and rebase merges leave X's tip unreachable, so they are not seen as merges.
    """
    out: list[Movement] = []
    for name in sorted(set(before) | set(after)):
        kind, _, short = name.partition("/")
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        if kind == "tags":
            if old is None and new is not None:
                out.append(Movement("tag_created", short, new, at=commit_time(repo, new)))
            continue
        if old is None:
            out.append(Movement("branch_created", short, new, at=commit_time(repo, new)))
        elif new is None:
            out.append(Movement("branch_deleted", short, None, previous=old))
        else:
            out.append(Movement("branch_moved", short, new, previous=old, forced=not _descends(repo, new, old),
                                at=commit_time(repo, new)))
    out += _merges(repo, before, after)
    return out


def _linear_span(repo: pygit2.Repository, new: str, old: str) -> set[str] | None:
    """The commits ``new`` adds over ``old`` when they are a plain line of single-parent commits (the usual push);
    None when a merge commit is among them, or ``old`` is not met within :data:`MAX_WALK` steps."""
    span, oid = set(), new
    for _ in range(MAX_WALK):
        if oid == old:
            return span
        try:
            parents = repo[oid].parent_ids
        except (KeyError, ValueError):
            return None
        if len(parents) != 1:
            return None
        span.add(oid)
        oid = str(parents[0])
    return None


# How git, GitHub and GitLab name the branch a merge commit merged, for a branch that came and went between two
# fetches (pushed, merged and deleted on a host while nobody was looking).
_MERGE_MESSAGES = (
    re.compile(r"^Merge (?:remote-tracking )?branch '(?:origin/)?([^']+)'"),
    re.compile(r"^Merge pull request #\d+ from [^/\s]+/(\S+)"),
    re.compile(r"^Merge branch \"([^\"]+)\""),
)


def _merged_name(message: str) -> str | None:
    first = message.split("\n", 1)[0].strip()
    for pattern in _MERGE_MESSAGES:
        found = pattern.match(first)
        if found:
            return found.group(1)
    return None


def _unseen_merges(repo: pygit2.Repository, into: str, old: str, new: str, known: set[str]) -> list[Movement]:
    """Merge commits on ``into``'s first-parent line since ``old`` whose merged tip no known branch accounts for;
    the branch is named from the merge commit's message (git's, GitHub's or GitLab's wording)."""
    found, oid = [], new
    for _ in range(MAX_WALK):
        if oid == old:
            break
        try:
            commit = repo[oid]
        except (KeyError, ValueError):
            break
        parents = [str(p) for p in commit.parent_ids]
        if not parents:
            break
        name = _merged_name(commit.message) if len(parents) > 1 else None
        for tip in parents[1:]:
            if name and name != into and tip not in known and not _descends(repo, old, tip):
                found.append(Movement("merged", name, oid, into=into, tip=tip, at=commit_time(repo, oid)))
        oid = parents[0]
    return found


def _merges(repo: pygit2.Repository, before: dict[str, str], after: dict[str, str]) -> list[Movement]:
    found = []
    branches = {n for n in (*before, *after) if n.startswith("heads/")}
    for into in sorted(n for n in after if n.startswith("heads/")):
        old, new = before.get(into), after[into]
        if old is None or old == new:
            continue
        # After a plain line of commits, only a tip on that line can have become reachable: no graph queries.
        span = _linear_span(repo, new, old)
        line: list[str] | None = None  # new's first-parent line back to old, read once for every merged tip
        for name in sorted(branches - {into}):
            tip = after.get(name) or before[name]
            if span is not None and tip not in span:
                continue
            if tip == old or _descends(repo, old, tip) or not _descends(repo, new, tip):
                continue
            if line is None:
                line = first_parent_line(repo, new, old)
            merge = merge_commit(repo, new, tip, old, line)
            if name not in before and merge == tip:
                continue
            found.append(Movement("merged", name.partition("/")[2], merge, into=into.partition("/")[2], tip=tip,
                                  at=commit_time(repo, merge)))
        if span is None and _descends(repo, new, old):  # merge commits came in: some may merge unseen branches
            known = {m.tip for m in found if m.into == into.partition("/")[2] and m.tip} | {
                after.get(n) or before[n] for n in branches}
            found += _unseen_merges(repo, into.partition("/")[2], old, new, known)
    return found
