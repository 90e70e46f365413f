"""Speculative merges: pushed branches that touch a common file, merged in a scratch worktree and tested.

Every ``prepared.merges.every`` seconds, with a test command configured (``prepared.merges.test``), the anchor
takes the branches the remote has (as its last fetch left them in ``refs/hive-watch/<remote>/heads/``; not the
base branch, not ``hive/`` drafts or ``hive-edits/``), the files each changed since it left the base, and every
pair that shares a file. Each pair is merged without a checkout (``git merge-tree``); a clean merge is checked
out in a scratch worktree and the test command run on it, and on each branch alone.

Only pairs that could surprise two people are merged: each branch is live (a live session works on it) or was
pushed recently (its tip is under ``RECENT_MS`` old), and the two are not known to be one person's (the persons
of the live sessions on a branch, else the roster person whose git email made its tip; one person's own two
branches are their own business).

Only a failure produces anything: a textual conflict, or tests that pass on each branch and fail on the merge.
It is one turn-tier message to the live sessions working on either branch (:mod:`gitive.anchor.base.mail`), each
session told once per pair of branches (a branch that moves again is not news to a session already told).
Results are cached by the pair of tips (and tests by tip), so an unchanged pair is never merged again; a branch
that moves is.
"""

from __future__ import annotations

import json
import shlex
import sqlite3
import time
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitive.anchor.base import mail, state
from gitive.anchor.base.context import Run, Tick, TickReport
from gitive.anchor.prepared import sandbox, tiers, workers
from gitive.anchor.prepared.settings import Merges, Prepared
from gitive.errors import GitiveError
from gitive.store import diffs, worktrees

if TYPE_CHECKING:
    from gitive.store.types import Repo


SKIP = ("hive/*", "hive/**", "hive-edits/**")
TEST_BUDGET_S = 900
MAX_PAIRS = 200  # merged per pass at most; the rest wait for the next
RECENT_MS = 3 * 86_400_000  # a branch whose tip is younger counts as recently pushed


@dataclass
class Pass:
    pairs: int = 0  # pairs sharing a file
    merged: int = 0  # merged and tested in this pass (not from the cache)
    failures: list[dict[str, Any]] = field(default_factory=list)
    notified: int = 0


def _base_branch(tips: dict[str, str]) -> str | None:
    return next((b for b in ("main", "master", "trunk", "develop") if b in tips), None)


def branches(repo: Repo, remote: str, merges: Merges) -> dict[str, str]:
    """branch -> tip of every watched branch that takes part."""
    prefix = f"refs/hive-watch/{remote}/heads/"
    from gitive.store import refs

    out = {}
    for name, tip in refs.tips(repo, prefix).items():
        branch = name[len(prefix):]
        if not tiers.matches(branch, SKIP) and tiers.matches(branch, merges.branches):
            out[branch] = tip
    return out


def _files(repo: Repo, st: sqlite3.Connection, base: str, tip: str, now: int) -> list[str]:
    key = f"merge-files:{tip}:{base}"
    found = state.get(st, key)
    if found is None:
        fork = worktrees.merge_base(repo, base, tip)
        found = list(diffs.stat(repo, fork, tip).paths) if fork else []
        state.put(st, key, found, now)
    return list(found)


def _run_tests(command: str, path: Path, home: Path, read: tuple[str, ...]) -> int | None:
    """The merge test in the sandbox, with ``prepared.read``'s paths and no network."""
    env = workers.environment(None, home, {})
    return workers.run(shlex.split(command), path, env, TEST_BUDGET_S, policy=sandbox.Policy(read)).code


def _tested(repo: Repo, st: sqlite3.Connection, tip: str, command: str, root: Path, now: int,
            read: tuple[str, ...] = ()) -> int | None:
    key = f"merge-test:{tip}:{command}"
    found = state.get(st, key)
    if found is None:
        path, home = root / f"tip-{tip[:12]}", workers.fresh_home(root / "homes")
        try:
            worktrees.add(repo, path, tip)
            found = {"code": _run_tests(command, path, home, read)}
        finally:
            worktrees.remove(repo, path)
            _rmtree(home)
        state.put(st, key, found, now)
    return found["code"]  # type: ignore[no-any-return]


def _rmtree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)


def _merge(repo: Repo, st: sqlite3.Connection, a: str, b: str, command: str, root: Path, now: int,
           read: tuple[str, ...] = ()) -> dict[str, Any]:
    """The outcome of merging tips ``a`` and ``b``: ``{ok}``, ``{conflict: paths}`` or ``{tests: exit}``."""
    tree, conflicts = worktrees.merge_tree(repo, a, b)
    if tree is None:
        return {"ok": False, "conflict": conflicts[:50]}
    codes = (_tested(repo, st, a, command, root, now, read), _tested(repo, st, b, command, root, now, read))
    if codes != (0, 0):
        return {"ok": True, "branch_failed": True}  # a branch failing alone is its own business, not the merge's
    path, home = root / f"merge-{a[:8]}-{b[:8]}", workers.fresh_home(root / "homes")
    try:
        worktrees.checkout_tree(repo, path, tree, [a, b])
        code = _run_tests(command, path, home, read)
    finally:
        worktrees.remove(repo, path)
        _rmtree(home)
    return {"ok": True} if code == 0 else {"ok": False, "tests": code}


def _body(a: str, b: str, result: dict[str, Any], command: str, who: dict[str, list[str]]) -> str:
    if result.get("conflict"):
        what = f"conflicts in {', '.join(result['conflict'][:8])}"
    else:
        what = f"merges cleanly, but `{command}` passes on each branch and fails on the merge (exit {result['tests']})"
    people = "; ".join(f"{br}: {', '.join(who.get(br) or ['no live session'])}" for br in (a, b))
    return (f"A speculative merge of the pushed branches {a} and {b} {what}. Sessions on them: {people}. "
            "Agree with the other session on who changes what before either branch is merged.")


def step(anchor: Run, st: sqlite3.Connection, index: sqlite3.Connection, now: int, report: TickReport,
         presence: dict[str, Any] | None = None) -> Pass:
    """One pass when it is due (see the module docstring); problems are reported, never raised."""
    settings = anchor.config.prepared or Prepared()
    merges = settings.merges
    done = Pass()
    if not merges.test:
        return done
    last = state.get(st, "merges:last")
    if last is not None and now - last < merges.every * 1000:
        return done
    names = [r for _, r, _ in anchor.watching()]
    remote = settings.remote or (names[0] if names else None)
    if remote is None:
        return done
    state.put(st, "merges:last", now, now)
    try:
        _pass(anchor, st, index, remote, merges, now, done, presence)
    except GitiveError as exc:
        report.problems["speculative merges"] = str(exc)
    if done.merged or done.notified:
        report.merges = {"pairs": done.pairs, "merged": done.merged, "failures": len(done.failures),
                         "notified": done.notified}
    return done


def _pass(anchor: Run, st: sqlite3.Connection, index: sqlite3.Connection, remote: str, merges: Merges,
          now: int, done: Pass, presence: dict[str, Any] | None = None) -> None:
    from gitive.core.home import gitive_home

    repo = anchor.hive.project
    tips = branches(repo, remote, merges)
    base_name = _base_branch(tips)
    if base_name is None:
        return
    base = tips.pop(base_name)
    touched = {b: set(_files(repo, st, base, tip, now)) for b, tip in tips.items()}
    sessions = mail.live_sessions(st, index, now, presence)
    owners = _owners(repo, index, sessions, tips, now)
    pairs = [(a, b) for a, b in combinations(sorted(owners), 2)
             if touched[a] & touched[b] and tips[a] != tips[b] and not _one_persons(owners[a], owners[b])]
    done.pairs = len(pairs)
    root = gitive_home() / "worktrees" / "merges"
    for a, b in pairs[:MAX_PAIRS]:
        key = f"merge-pair:{tips[a]}:{tips[b]}"
        result = state.get(st, key)
        if result is None:
            started = time.monotonic()
            read = (anchor.config.prepared or Prepared()).read
            result = _merge(repo, st, tips[a], tips[b], merges.test, root, now, read)
            result["seconds"] = round(time.monotonic() - started, 3)
            result["told"] = []
            done.merged += 1
        if not result["ok"]:
            done.failures.append({"a": a, "b": b, **result})
            _tell(anchor, st, a, b, result, merges.test, sessions, done, now)
        state.put(st, key, result, now)


def _owners(repo: Repo, index: sqlite3.Connection, sessions: list[mail.Session], tips: dict[str, str],
            now: int) -> dict[str, frozenset[str]]:
    """branch -> the persons it is known to be, for every branch that is live or recently pushed (others left out).

    The persons of the live sessions on it; else the one roster person whose git email made its tip; else none
    known (an empty set, which never counts as one person's)."""
    from gitive.store import objects

    by_email: dict[str, set[str]] = {}
    for person, emails in index.execute("SELECT person, emails FROM members WHERE active = 1 AND role != 'anchor'"):
        for email in json.loads(emails or "[]"):
            by_email.setdefault(str(email).lower(), set()).add(person)
    out = {}
    for branch, tip in tips.items():
        live = frozenset(s.person for s in sessions if s.branch == branch)
        facts = objects.tip_facts(repo, tip, [])
        if not live and (facts is None or now - facts.at > RECENT_MS):
            continue  # neither live nor recently pushed: long dead work surprises nobody
        people = by_email.get(facts.email, set()) if facts else set()
        out[branch] = live or (frozenset(people) if len(people) == 1 else frozenset())
    return out


def _one_persons(a: frozenset[str], b: frozenset[str]) -> bool:
    return len(a) == 1 and a == b


def _tell(anchor: Run, st: sqlite3.Connection, a: str, b: str, result: dict[str, Any], command: str,
          sessions: list[mail.Session], done: Pass, now: int) -> None:
    """Each live session on either branch hears of this pair of branches once (whatever their tips do next)."""
    key = f"merge-told:{a}:{b}"
    told = set(state.get(st, key) or []) | set(result["told"])
    on = [s for s in sessions if s.branch in (a, b)]
    new = [s for s in on if f"{s.machine}/{s.name}" not in told]
    if not new:
        return
    who = {br: [s.address for s in on if s.branch == br] for br in (a, b)}
    if mail.send(anchor.hive, "merges", new, _body(a, b, result, command, who), at=now):
        told |= {f"{s.machine}/{s.name}" for s in new}
        result["told"] = sorted(told)
        state.put(st, key, sorted(told), now)
        done.notified += len(new)
        anchor.unpushed = True


class SpeculativeMerges:
    """The tick's step: a speculative-merge pass when one is due."""

    name = "speculativemerges"

    def run(self, tick: Tick) -> None:
        step(tick.run, tick.state, tick.index, tick.now, tick.report, tick.presence)
