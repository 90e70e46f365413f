"""Simulated team machines for CLI tests: each is a clone plus its own ``GITIVE_HOME``.

``Machine.run("sync", "--json")`` runs ``gitive`` in-process (``gitive.cli.main.run``) from the machine's clone
with the machine's home, and captures exit code, stdout and stderr. Nothing is mocked: every command runs
real git against real repositories.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pygit2

from testing import fixtures


@dataclass
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)

    def __str__(self) -> str:  # shown by pytest when an assertion on a result fails
        return f"exit {self.code}\n--- stdout\n{self.out}--- stderr\n{self.err}"


@contextlib.contextmanager
def _environ(changes: dict[str, str | None]) -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in changes}
    try:
        for k, v in changes.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def run_cli(argv: list[str], cwd: Path, env: dict[str, str | None], stdin: str = "") -> Result:
    """Run ``gitive argv`` in-process in ``cwd`` with ``env`` applied and ``stdin`` as standard input;
    restore cwd, env and streams afterwards."""
    from gitive.cli.main import run
    from testing import people

    out, err = io.StringIO(), io.StringIO()
    old_cwd = os.getcwd()
    os.chdir(cwd)
    try:
        with (_environ(env), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err),
              people.stdin(stdin)):
            code = run(argv)
    finally:
        os.chdir(old_cwd)
    return Result(code, out.getvalue(), err.getvalue())


@dataclass
class Machine:
    """One simulated machine: a work tree (``clone``) and a ``GITIVE_HOME`` of its own."""

    name: str
    home: Path
    clone: Path
    env: dict[str, str | None] = field(default_factory=dict)

    def run(self, *argv: str, env: dict[str, str | None] | None = None, stdin: str = "") -> Result:
        return run_cli(list(argv), self.clone, {"GITIVE_HOME": str(self.home), **self.env, **(env or {})}, stdin)

    def ok(self, *argv: str, env: dict[str, str | None] | None = None, stdin: str = "") -> Result:
        """``run`` and require exit 0."""
        result = self.run(*argv, env=env, stdin=stdin)
        assert result.code == 0, f"gitive {' '.join(argv)} on {self.name}: {result}"
        return result

    def decide(self, *argv: str, env: dict[str, str | None] | None = None) -> Result:
        """Run a decision command with ``--passphrase-stdin`` and this machine's person key's passphrase
        (the key is created, at test cost, if this home has none)."""
        from testing import people

        people.person_key(self.home)
        return self.run(*argv, "--passphrase-stdin", env=env, stdin=people.PASSPHRASE + "\n")

    def decided(self, *argv: str, env: dict[str, str | None] | None = None) -> Result:
        """``decide`` and require exit 0."""
        result = self.decide(*argv, env=env)
        assert result.code == 0, f"gitive {' '.join(argv)} on {self.name}: {result}"
        return result

    @property
    def signer(self) -> Any:
        """This machine's person key, unlocked (created at test cost if missing)."""
        from testing import people

        return people.person_key(self.home)

    def json(self, *argv: str, env: dict[str, str | None] | None = None) -> Any:
        """``run`` with ``--json``, require exit 0, and parse stdout."""
        return self.ok(*argv, "--json", env=env).json()

    @property
    def repo(self) -> pygit2.Repository:
        return pygit2.Repository(str(self.clone))

    @property
    def key(self) -> Any:
        from gitive.core.keys import load_key

        return load_key(self.home / "machine.key")

    @property
    def id(self) -> str:
        from gitive.core.keys import machine_id

        return machine_id(self.key)

    @property
    def team_id(self) -> str:
        return self.git("config", "hive.team").strip()

    @property
    def project_log(self) -> str:
        """The log this machine's project lessons of its clone go to: one per (author, project)."""
        from gitive.core.records import project_log
        from gitive.team.hive import open_hive

        return project_log(open_hive(self.clone).project_id)

    def append(self, record: dict[str, Any], log: str = "team", *, at: int | None = None) -> Any:
        """Append ``record`` to this machine's ``log`` with ``gitive.store.logs`` (no sync)."""
        from gitive.store import logs

        return logs.append(self.repo, self.key, self.team_id, log, dict(TEAM_SCOPE), record, at=at)

    def git(self, *args: str, check: bool = True) -> str:
        return fixtures.run_git(list(args), cwd=self.clone, check=check)

    def config(self) -> str:
        return self.git("config", "--list", "--local")


class Fleet:
    """Factory of machines around remotes; also founds, invites and joins through the CLI."""

    def __init__(self, base: Path) -> None:
        self.base = base

    def machine(self, name: str, remote: str | Path) -> Machine:
        home = self.base / "homes" / name
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        clone = fixtures.clone(remote, self.base / "clones" / name)
        return Machine(name, home, clone)

    def known(self, name: str) -> Machine:
        """The machine ``name`` this fleet already has (a restored team's), without cloning anything."""
        home, clone = self.base / "homes" / name, self.base / "clones" / name
        assert home.is_dir() and clone.is_dir(), f"no machine {name} under {self.base}"
        return Machine(name, home, clone)

    def found(self, machine: Machine, person: str) -> Machine:
        machine.decided("init", "--person", person, "--machine", machine.name)
        machine.ok("sync")
        return machine

    def invite(self, inviter: Machine, *args: str) -> str:
        code = inviter.decided("invite", *args).out.strip()
        assert code.startswith("gitive-"), code
        return code

    def join(self, machine: Machine, code: str, person: str, same_person_as: Machine | None = None) -> Machine:
        """``gitive join``; a second machine of a person first gets that person's key (export, import)."""
        if same_person_as is not None:
            from testing import people

            people.copy_person_key(same_person_as.home, machine.home)
        machine.decided("join", code, "--person", person, "--machine", machine.name)
        return machine

    def team(self, remote: str | Path, *people: tuple[str, str]) -> list[Machine]:
        """Found a team with ``people[0]`` = (person, machine) and invite every other one; all synced."""
        (person, name), *rest = people
        founder = self.found(self.machine(name, remote), person)
        out = [founder]
        for person_, name_ in rest:
            code = self.invite(founder)
            out.append(self.join(self.machine(name_, remote), code, person_))
        for m in out[:-1]:  # the last joiner's own join already fetched everything there is
            m.ok("sync")
        return out


def share_file(machines: list[Machine], name: str = "api.proto", content: str = "syntax = \"proto3\";\n",
               message: str = "add the api schema") -> str:
    """Commit ``name`` on the first machine, push ``main``, and pull it on the others; return the commit."""
    first, *rest = machines
    commit = fixtures.commit_file(first.clone, name, content, message)
    first.git("push", "--quiet", "origin", "main")
    for m in rest:
        m.git("pull", "--quiet", "--ff-only", "origin", "main")
    return commit


@contextlib.contextmanager
def alice_and_bob(base: Path) -> Iterator[tuple[Machine, Machine, Path]]:
    """alice (admin, founder) and bob on a new bare remote under ``base``, both holding ``api.proto``; the
    ``GITIVE_HOME`` the CLI sets while building them is put back after."""
    with _environ({"GITIVE_HOME": os.environ.get("GITIVE_HOME")}):
        remote = fixtures.init_bare(base / "remote.git")
        alice, bob = Fleet(base / "fleet").team(remote, ("alice", "a"), ("bob", "b"))
        share_file([alice, bob])
        yield alice, bob, remote


def restored_alice_and_bob(place: Any) -> tuple[Machine, Machine, Path]:
    """:func:`alice_and_bob`'s team at ``place.live`` (a ``testing.teams.Place``): founded once per test
    process and restored for each test, with the paths and ids a founding there would have."""
    from testing import teams

    def build(live: Path) -> None:
        remote = fixtures.init_bare(live / teams.REMOTE)
        share_file(Fleet(live / teams.FLEET).team(remote, ("alice", "a"), ("bob", "b")))

    place.restore("alice-and-bob", build)
    fleet = Fleet(place.live / teams.FLEET)
    return fleet.known("a"), fleet.known("b"), place.live / teams.REMOTE


def on_index(machine: Machine, fn: Any) -> Any:
    """``fn(hive, conn)`` on ``machine``'s index, caught up with its refs."""
    from gitive.index import db
    from gitive.index.catchup import catch_up
    from gitive.team.hive import open_hive

    with _environ({"GITIVE_HOME": str(machine.home)}):
        hive = open_hive(machine.clone)
        with db.connect(hive.index_path) as conn:
            catch_up(hive, conn)
            return fn(hive, conn)


def roster_view(team: dict[str, Any]) -> list[tuple[str, str, str, bool]]:
    """The comparable part of ``gitive team --json``: (person, name, machine, active) per member."""
    return sorted((m["person"], m["name"], m["machine"], m["active"]) for m in team["members"])


def one_line_error(result: Result, *words: str) -> str:
    """Assert ``result`` is a clean gitive error (exit 1, one ``gitive:`` line, no traceback); return it."""
    assert result.code == 1, str(result)
    lines = [ln for ln in result.err.splitlines() if ln.strip()]
    assert len(lines) == 1, str(result)
    assert lines[0].startswith("gitive: "), str(result)
    assert "Traceback" not in result.err + result.out, str(result)
    for word in words:
        assert word in lines[0], f"{word!r} not in {lines[0]!r}"
    return lines[0]



# Building data gitive itself would refuse to write: forged, oversized or out-of-sequence log entries.

TEAM_SCOPE: dict[str, Any] = {"team": True}


def make_key(machine: Machine) -> Any:
    """Create (or load) ``machine``'s key without joining any team: a machine the roster never admitted."""
    from gitive.core.keys import load_or_create_key

    return load_or_create_key(machine.home / "machine.key")[0]


def note(i: int | str, founder: str) -> dict[str, Any]:
    """A small, valid record to fill a ``team`` log with (kind ``team``, distinguishable by name)."""
    return {"type": "team", "name": f"note {i}", "founder": founder}


def signed_entry(key: Any, team_id: str, author: str, seq: int, record: dict[str, Any], *,
                 log: str = "team", at: int | None = None) -> dict[str, Any]:
    """``Signed<LogEntry>`` of ``record`` signed by ``key`` but claiming ``author`` and ``seq`` (unchecked)."""
    from gitive.core import signed
    from gitive.core.clock import now_ms

    body = {"author": author, "log": log, "scope": dict(TEAM_SCOPE), "seq": seq,
            "at": at if at is not None else now_ms(), "record": record}
    return signed.sign(key, team_id, record["type"], body)


def entry_commit(repo: pygit2.Repository, envelope: dict[str, Any] | bytes, parent: str | None) -> str:
    """Write an entry commit in the canonical form ``gitive.store.logs`` writes, for any envelope; no ref moves."""
    from gitive.core import canonical
    from testing.builders import entry_commit as write

    return write(repo, envelope if isinstance(envelope, bytes) else canonical.dumps(envelope), parent)


def push_commit(machine: Machine, commit: str, ref: str, remote: str = "origin", *, force: bool = False) -> None:
    """``git push <remote> <commit>:<ref>`` from ``machine``'s clone (the objects must be in that clone)."""
    machine.git("push", "--quiet", remote, f"{'+' if force else ''}{commit}:{ref}")
