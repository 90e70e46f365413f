"""The pre-receive guard refuses exactly what a reader would (docs/verification.md §1-2): for random histories
of one log ref (honest appends, forged or junk commits stacked on it, honest tips replacing junk, rewrites
and rollbacks of honest entries, deletions), every update the guard lets through leaves a tip that a reader
verifies from the root and that keeps every entry a reader verified at the old tip; every other update is
refused. Then the same through a real ``git push`` into a bare repository with the hook installed."""

from __future__ import annotations

import random
import subprocess
from pathlib import Path
from typing import Any

import pygit2
from hypothesis import given, settings
from hypothesis import strategies as st

from gitive.core import canonical, signed
from gitive.store import guard, logs, refs, serverhook, verify
from testing import hostile
from testing.builders import TEAM_ID, machine
from testing.fixtures import init_bare, init_repo

OWNER, OTHER = machine("guard-owner"), machine("guard-other")
REF = refs.log_ref(OWNER.id, "team")
STEPS = ("append", "forge", "junk", "rewrap", "replace-junk", "rewrite", "rollback", "delete", "foreign-first")


def _reader_accepts(repo: pygit2.Repository, old: str | None, new: str | None) -> bool:
    """The reader's verdict from scratch: the new tip verifies whole, and keeps what the old tip verified."""
    if new is None:
        return False
    result, _ = verify.verify_chain(repo, TEAM_ID, REF, OWNER.id, "team", new, lambda oid: None)
    if result.problem is not None:
        return False
    if old is None:
        return True
    kept, _ = verify.verify_chain(repo, TEAM_ID, REF, OWNER.id, "team", old, lambda oid: None)
    head = kept.entries[-1].commit if kept.entries else None
    return head is None or head == new or repo.descendant_of(new, head)


class History:
    """One ref's tip on the server and the owner's own honest chain, built on real git objects."""

    def __init__(self, repo: pygit2.Repository) -> None:
        self.repo, self.tip, self.honest = repo, None, []  # type: ignore[var-annotated]
        self.at = 1_700_000_000_000

    def _honest(self, below: str | None) -> str:
        below_entry = logs.read_entry(self.repo, below) if below else None
        self.at += 1000
        body: dict[str, Any] = {"v": 2, "author": OWNER.id, "log": "team", "scope": {"team": True},
                                "seq": below_entry.seq + 1 if below_entry else 1, "at": self.at,
                                "record": {"type": "team", "name": f"n{self.at}", "founder": OWNER.id}}
        if below_entry:
            body["prev"] = below_entry.hash
        data = canonical.dumps(signed.sign(OWNER.key, TEAM_ID, "team", body))
        return logs.write_commit(self.repo, data, body, below)

    def candidate(self, step: str, rng: random.Random) -> str | None:
        """The new tip somebody pushes for ``step`` (None: a deletion)."""
        honest_tip = self.honest[-1] if self.honest else None
        if step == "append":
            new = honest_tip
            for _ in range(rng.randint(1, 3)):
                new = self._honest(new)
            return new
        if step in ("forge", "foreign-first"):
            below = self.tip if step == "forge" else None
            below_entry = None
            try:
                below_entry = logs.read_entry(self.repo, below) if below else None
            except Exception:
                below_entry = None
            body: dict[str, Any] = {"v": 2, "author": OWNER.id, "log": "team", "scope": {"team": True},
                                    "seq": below_entry.seq + 1 if below_entry else 1, "at": self.at,
                                    "record": {"type": "team", "name": "forged", "founder": OWNER.id}}
            if below_entry:
                body["prev"] = below_entry.hash
            return hostile.forged_entry(self.repo, OTHER.key, TEAM_ID, body, below, claim=OWNER.id)
        if step == "junk":
            return _junk(self.repo, self.tip, rng.randint(1, 3))
        if step == "rewrap" and honest_tip:
            return hostile.rewrap(self.repo, logs.read_entry(self.repo, honest_tip), message=f"{rng.random()}\n")
        if step == "replace-junk":
            return self._honest(honest_tip)  # what the owner's lease push sends
        if step == "rewrite" and len(self.honest) >= 2:
            return self._honest(self.honest[rng.randrange(len(self.honest) - 1)])  # drops an honest entry
        if step == "rollback" and len(self.honest) >= 2:
            return self.honest[rng.randrange(len(self.honest) - 1)]
        if step == "delete":
            return None
        return self._honest(honest_tip)

    def accept(self, new: str) -> None:
        self.tip = new
        if any(new == h for h in self.honest) or self._is_honest(new):
            chain = []
            oid: str | None = new
            while oid:
                chain.append(oid)
                oid = logs.read_entry(self.repo, oid).parent
            self.honest = chain[::-1]

    def _is_honest(self, oid: str) -> bool:
        result, _ = verify.verify_chain(self.repo, TEAM_ID, REF, OWNER.id, "team", oid, lambda o: None)
        return result.problem is None


def _junk(repo: pygit2.Repository, parent: str | None, n: int) -> str:
    tip = parent
    for i in range(n):
        builder = repo.TreeBuilder()
        builder.insert("entry.json", repo.create_blob(b"junk %d" % i), pygit2.enums.FileMode.BLOB)
        who = pygit2.Signature("x", "x@x", 1_700_000_000 + i, 0)
        tip = str(repo.create_commit(None, who, who, "junk\n", builder.write(),
                                     [pygit2.Oid(hex=tip)] if tip else []))
    assert tip is not None
    return tip


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(STEPS), st.integers(0, 2**32 - 1)), min_size=1, max_size=12))
def test_the_guard_accepts_exactly_what_a_reader_keeps(tmp_path_factory: Any, steps: list[Any]) -> None:
    repo = pygit2.init_repository(str(tmp_path_factory.mktemp("guard") / "server.git"), bare=True)
    history = History(repo)
    for step, seed in steps:
        new = history.candidate(step, random.Random(seed))
        if new == history.tip:
            continue
        reason = guard.check_update(repo, TEAM_ID, guard.Update(history.tip, new, REF))
        expected = _reader_accepts(repo, history.tip, new)
        assert (reason is None) == expected, (step, reason)
        if reason is None:
            assert new is not None
            history.accept(new)


def _push(client: Path, server: Path, spec: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "push", str(server), spec], cwd=client, capture_output=True, text=True,
                          check=False)


def test_an_owner_replaces_junk_that_landed_before_the_guard_and_nobody_rewrites_it_after(tmp_path: Path) -> None:
    server = init_bare(tmp_path / "server.git")
    client = init_repo(tmp_path / "client")
    repo = pygit2.Repository(str(client))
    history = History(repo)
    honest = history.candidate("append", random.Random(1))
    history.accept(honest)
    repo.references.create(REF, honest, force=True)
    assert _push(client, server, f"{REF}:{REF}").returncode == 0  # no guard yet
    junk = _junk(repo, honest, 2)
    assert _push(client, server, f"+{junk}:{REF}").returncode == 0  # junk lands on the owner's ref
    serverhook.install(server, TEAM_ID)
    more = _junk(repo, junk, 1)
    refused = _push(client, server, f"{more}:{REF}")
    assert refused.returncode != 0 and "gitive guard" in refused.stderr
    mine = history.candidate("replace-junk", random.Random(2))
    replaced = subprocess.run(["git", "push", f"--force-with-lease={REF}:{junk}", str(server), f"{mine}:{REF}"],
                              cwd=client, capture_output=True, text=True, check=False)
    assert replaced.returncode == 0, replaced.stderr  # a non-fast-forward that drops only refused commits
    history.accept(mine)
    rewrite = history.candidate("rewrite", random.Random(3))
    refused = _push(client, server, f"+{rewrite}:{REF}")
    assert refused.returncode != 0 and "not a fast-forward" in refused.stderr
