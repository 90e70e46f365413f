"""A team with an anchor for tests: alice (founder), bob and the anchor machine, around one bare remote.

The team is built through the real CLI (``gitive invite --anchor``, ``gitive join``) once per test process and
restored in place for each test (:class:`testing.teams.Place`): same paths, so the same project id and every
signed record naming it (a copy elsewhere would be a project nobody owns). Ticks run in this process with the library
(:class:`Ticker`) or as the real ``gitive anchor`` process (``tests/anchor/test_process.py``).
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from testing import fixtures, live, teams
from testing.machines import Fleet, Machine, _environ

MERGED = 'e.event.action == "vcs.merged" && e.vcs.branch == "{branch}"'
PEOPLE = ("alice", "bob", "anchor")


@dataclass
class AnchoredTeam:
    base: Path
    alice: Machine
    bob: Machine
    anchor: Machine

    @property
    def remote(self) -> Path:
        return self.base / live.REMOTE


def build(base: Path) -> AnchoredTeam:
    """Found the team, invite bob and the anchor, sync everyone, run the anchor's first (baseline) tick."""
    fleet = Fleet(base)
    remote = fixtures.init_bare(base / live.REMOTE)
    alice, bob = fleet.team(remote, ("alice", "alice"), ("bob", "bob"))
    code = fleet.invite(alice, "--anchor")
    anchor = fleet.machine("anchor", remote)
    anchor.ok("join", code, "--machine", "anchor")
    for m in (alice, bob):
        m.ok("sync")
    anchor.ok("anchor", "run", "--once")
    return AnchoredTeam(base, alice, bob, anchor)


def known(base: Path) -> AnchoredTeam:
    """The team :func:`build` made under ``base`` (restored there), without building anything."""
    fleet = Fleet(base)
    alice, bob, anchor = (fleet.known(name) for name in PEOPLE)
    return AnchoredTeam(base, alice, bob, anchor)


def copy(template: Path, base: Path) -> AnchoredTeam:
    """A copy of a team built under ``template``, at ``base``: a new path, so a project nobody owns yet (prefer
    :func:`restored`, which keeps the project id; tests/harness/test_anchor_notice.py on main still copies)."""
    alice, bob, anchor = live.copy_team(template, base, list(PEOPLE))
    return AnchoredTeam(base, alice, bob, anchor)


def restored(place: teams.Place) -> AnchoredTeam:
    """The team at ``place``, as :func:`build` left it (built there the first time in this test process)."""
    return known(place.restore("anchored", build))


def dated_now() -> contextlib.AbstractContextManager[None]:
    """Commits made inside get the real time (the hermetic environment pins 2024-01-01)."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())
    return _environ({"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp})


def push_branch(machine: Machine, branch: str, path: str = "auth.py") -> str:
    """A branch with one commit, pushed; back on main afterwards. Returns the branch's tip."""
    with dated_now():
        machine.git("checkout", "--quiet", "-b", branch)
        tip = fixtures.commit_file(machine.clone, path, f"# {branch}\n", f"work on {branch}")
        machine.git("push", "--quiet", "origin", branch)
        machine.git("checkout", "--quiet", "main")
    return tip


def merge(machine: Machine, branch: str, *, delete: bool = False) -> str:
    """Merge ``branch`` into main with a merge commit and push (as a host would); the merge commit's id."""
    with dated_now():
        machine.git("pull", "--quiet", "--ff-only", "origin", "main")
        machine.git("merge", "--quiet", "--no-ff", "-m", f"Merge {branch}", f"origin/{branch}")
        machine.git("push", "--quiet", "origin", "main")
        if delete:
            machine.git("push", "--quiet", "origin", f":{branch}")
    return machine.git("rev-parse", "HEAD").strip()


def owe(machine: Machine, condition: str, action: str, *args: str, env: dict[str, str | None] | None = None,
        decide: bool = False) -> dict[str, Any]:
    """``gitive owe --when C --do A ... --json`` on ``machine``; the record written. ``decide`` gives the
    person key's passphrase (an obligation for someone else is a person's decision)."""
    run = machine.decide if decide else machine.run
    result = run("owe", "--when", condition, "--do", action, *args, "--json", env=env)
    assert result.code == 0, str(result)
    return result.json()["obligation"]


def owe_unchecked(machine: Machine, owner: str, condition: str, action: str, *, to: str | None = None
                  ) -> dict[str, Any]:
    """An obligation record written straight to ``machine``'s team log, past the write-time rules (as an older
    gitive, or any writer that skips them, would): what readers and the anchor must still handle."""
    from gitive.anchor.obligations.vocabulary import load
    from gitive.core.clock import now_ms
    from gitive.index import obligations as table

    now = now_ms()
    body: dict[str, Any] = {"type": "obligation", "owner": owner, "condition": condition, "action": action,
                            "expires": now + 7 * 86_400_000, "created": now, "source": {"kind": "cli"},
                            "vocabulary": load().version, "actor": "agent"}
    if to is not None:
        body["to"] = to
    body["id"] = table.obligation_id(machine.id, body)
    machine.append(body, at=now)
    return body


class Ticker:
    """The anchor's tick in this process, one :class:`~gitive.anchor.tick.Anchor` across calls (one run)."""

    def __init__(self, machine: Machine, config: Any = None) -> None:
        from gitive.anchor.base.configuration import Config
        from gitive.anchor.tick import Anchor
        from gitive.core.clock import now_ms
        from gitive.team.hive import open_hive

        self.machine = machine
        with live.on(machine):
            self.anchor = Anchor(open_hive(machine.clone), config or Config(), now_ms())

    def __call__(self, **kwargs: Any) -> Any:
        from gitive.anchor.tick import tick

        with live.on(self.machine):
            return tick(self.anchor, **kwargs)

    def queue(self) -> list[dict[str, Any]]:
        from gitive.anchor.tick import queued

        with live.on(self.machine):
            return queued(self.anchor)


def firing_entries(machine: Machine) -> list[dict[str, Any]]:
    """The firing records in ``machine``'s own ledger log, read from git (not from any projection)."""
    from gitive.store import logs, refs

    name = refs.log_ref(machine.id, "ledger")
    return [e.body["record"] for e in logs.entries(machine.repo, name) if e.kind == "firing"]


def owed(machine: Machine, *args: str) -> list[dict[str, Any]]:
    return machine.json("owed", *args)["obligations"]
