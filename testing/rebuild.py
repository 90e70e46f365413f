"""Incremental = rebuild (docs/verification.md §4): a world of machines around a real bare remote, moves that
honest members and attackers make, and the check that an index kept up to date step by step equals one
rebuilt from the refs alone.

A move is a function ``(world, rng) -> None``. Extend the harness by adding moves to a copy of
:data:`MOVES` and building a test class with :func:`machine_test`, e.g. in another test module::

    from testing.rebuild import MOVES, machine_test, move

    extra = dict(MOVES)

    @move(extra, "removed member backdates")
    def backdate(world, rng): ...

    TestWithAuthority = machine_test(extra)
"""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from gitive.core import canonical, signed
from gitive.index import db, ingest
from gitive.store import logs, refs
from testing import fixtures, hostile
from testing.machines import Fleet, Machine, make_key, note

Move = Callable[["World", random.Random], None]
MOVES: dict[str, Move] = {}

# Problems only an index that lived through the history can know: what a source once served (rollback),
# what this machine replaced on a remote, and inner signatures checked in the background so far.
HISTORY_ONLY = ("rollback", "replaced", "inner-signature")


def move(table: dict[str, Move], name: str) -> Callable[[Move], Move]:
    def register(fn: Move) -> Move:
        table[name] = fn
        return fn
    return register


@contextmanager
def _home(machine: Machine) -> Iterator[None]:
    old = os.environ.get("GITIVE_HOME")
    os.environ["GITIVE_HOME"] = str(machine.home)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("GITIVE_HOME", None)
        else:
            os.environ["GITIVE_HOME"] = old


@dataclass
class World:
    """alice (founder) and bob (member) in one team, bob's key also on a stolen copy (``twin``), and mallory,
    whose key nobody admitted and who can push anything to the remote. ``readers`` are checked each step."""

    base: Path
    remote: Path
    alice: Machine
    bob: Machine
    twin: Machine
    mallory: Machine
    mallory_key: Any
    readers: list[Machine] = field(default_factory=list)
    steps: int = 0

    @classmethod
    def create(cls, base: Path) -> World:
        remote = fixtures.init_bare(base / "remote.git")
        fleet = Fleet(base / "fleet")
        alice, bob = fleet.team(remote, ("alice", "laptop"), ("bob", "desk"))
        fixtures.commit_file(alice.clone, "api.proto", "syntax = 1;\n", "api")
        alice.git("push", "--quiet", "origin", "main")
        bob.git("pull", "--quiet", "--ff-only", "origin", "main")
        twin = Machine("desk-copy", bob.home, base / "desk-copy")
        shutil.copytree(bob.clone, twin.clone)
        fleet.machine("evil", remote)
        return cls.known(base)

    @classmethod
    def known(cls, base: Path) -> World:
        """The world :meth:`create` built at ``base`` (or a copy of it restored there)."""
        fleet = Fleet(base / "fleet")
        alice, bob, mallory = fleet.known("laptop"), fleet.known("desk"), fleet.known("evil")
        twin = Machine("desk-copy", bob.home, base / "desk-copy")
        return cls(base, base / "remote.git", alice, bob, twin, mallory, make_key(mallory), readers=[alice, bob])

    @classmethod
    def restored(cls, root: Path) -> World:
        """A fresh world at ``root/live``: built once there, then copied back from ``root/snapshot`` for every
        later example (founding a team costs seconds; a copy, a fraction). Every path is the same each time,
        so every id, key and record is too: moves drawn with the same seeds now write the same gestures and
        entries in every example, as a long-lived team would see them again."""
        from testing.teams import reset_process_state

        live, snapshot = root / "live", root / "snapshot"
        shutil.rmtree(live, ignore_errors=True)
        if snapshot.exists():
            shutil.copytree(snapshot, live, symlinks=True)
            reset_process_state()
            return cls.known(live)
        with _home(Machine("unused", root / "unused-home", live)):
            world = cls.create(live)
        shutil.copytree(live, snapshot, symlinks=True)
        return world

    # -- what attackers use ----------------------------------------------------------------------------

    def fetch(self, machine: Machine) -> None:
        machine.git("fetch", "--quiet", "origin", "+refs/hive/*:refs/hive-remotes/origin/*")

    def remote_tip(self, ref: str) -> str | None:
        return fixtures.ref_tips(self.remote).get(ref)

    def push(self, machine: Machine, commit: str, ref: str) -> None:
        machine.git("push", "--quiet", "--force", "origin", f"{commit}:{ref}")

    def remote_entries(self, ref: str) -> list[logs.Entry]:
        """The entries of ``ref`` as the remote holds it, read in mallory's clone (after a fetch)."""
        self.fetch(self.mallory)
        tip = refs.tip(self.mallory.repo, "refs/hive-remotes/origin/" + ref[len("refs/hive/"):])
        out = []
        while tip:
            try:
                entry = logs.read_entry(self.mallory.repo, tip)
            except Exception:
                break
            out.append(entry)
            tip = entry.parent
        return out[::-1]

    def forged(self, owner: Machine, below: logs.Entry | None, record: dict[str, Any], *, at: int | None = None,
               log: str = "team") -> str:
        """An entry claiming ``owner`` above ``below``, signed with mallory's key, written in mallory's clone."""
        body: dict[str, Any] = {"v": 2, "author": owner.id, "log": log, "scope": {"team": True},
                                "seq": below.seq + 1 if below else 1,
                                "at": at if at is not None else (below.body["at"] + 1 if below else 1_700_000_000_000),
                                "record": record}
        if below:
            body["prev"] = below.hash
        env = {**signed.sign(self.mallory_key, self.alice.team_id, record["type"], body), "by": owner.id}
        return logs.write_commit(self.mallory.repo, canonical.dumps(env), body, below.commit if below else None)

    # -- the check -------------------------------------------------------------------------------------

    def check(self) -> None:
        for reader in self.readers:
            incremental, rebuilt = self.views(reader)
            assert incremental == rebuilt, f"{reader.name}: incremental index differs from a rebuild " \
                                           f"after step {self.steps}: {_diff(incremental, rebuilt)}"

    def views(self, reader: Machine) -> tuple[dict[str, Any], dict[str, Any]]:
        from gitive.index.refresh import fresh_index
        from gitive.team.hive import open_hive

        with _home(reader):
            hive = open_hive(reader.clone)
            with fresh_index(hive) as (conn, _):
                incremental = normalized(conn)
            path = self.base / f"rebuild-{reader.name}.sqlite"
            for suffix in ("", "-wal", "-shm"):
                path.with_name(path.name + suffix).unlink(missing_ok=True)
            with db.connect(path) as conn:
                ingest.ingest(conn, hive.stores(), hive.team_id, hive.founder, hive.me, key=hive.machine_key)
                rebuilt = normalized(conn)
        return incremental, rebuilt


def _stats(conn: sqlite3.Connection) -> list[Any]:
    """Citation stats, recounted from admitted citation rows (docs/verification.md §4), so the order in which two
    equivocating entries arrive cannot decide a count."""
    return conn.execute("SELECT lesson, citations, successes FROM lesson_stats ORDER BY 1").fetchall()


def _search_terms(conn: sqlite3.Connection) -> list[Any]:
    """(lesson, shown body, term) for every term the search index holds for a live row (issue 23: the
    incremental index and a rebuild must agree on texts, the searchable ones included)."""
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.lesson_terms_seen USING fts5vocab(main, lesson_fts, "
                 "'instance')")
    return conn.execute("SELECT DISTINCT t.lesson, t.body_hash, v.term FROM temp.lesson_terms_seen v "
                        "LEFT JOIN lesson_text t ON t.fts_rowid = v.doc ORDER BY 1, 2, 3").fetchall()


def normalized(conn: sqlite3.Connection) -> dict[str, Any]:
    """Everything a projection shows, without timestamps: admitted members' entries outside quarantines (by
    hash), members, lesson states, stats, what was opened of sealed scopes, bodies, quarantines, and problems
    by kind and ref."""
    admitted = "author IN (SELECT machine FROM members)"
    return {
        "entries": conn.execute(
            "SELECT e.author, e.log, e.seq, e.hash FROM entries e JOIN logs l USING (author, log) "
            f"WHERE e.{admitted} AND (l.quarantined_from IS NULL OR e.seq < l.quarantined_from) "
            "ORDER BY 1, 2, 3").fetchall(),
        "members": conn.execute("SELECT machine, person, name, role, active, ts, via, depth FROM members "
                                "ORDER BY 1").fetchall(),
        "lessons": conn.execute("SELECT lesson, state, approver, superseded_by FROM lesson_status "
                                "ORDER BY 1").fetchall(),
        "stats": _stats(conn),
        "quarantines": conn.execute(f"SELECT author, log, quarantined_from FROM logs WHERE {admitted} "
                                    "AND quarantined_from IS NOT NULL ORDER BY 1, 2").fetchall(),
        "sealed": conn.execute("SELECT author, log, seq, state, kind FROM sealed_entries ORDER BY 1, 2, 3").fetchall(),
        "bodies": conn.execute("SELECT body_hash, lesson, text FROM lesson_bodies WHERE lesson IN "
                               "(SELECT id FROM visible_lessons) ORDER BY 1").fetchall(),  # the texts shown
        "held texts": conn.execute("SELECT body_hash, lesson, text FROM lesson_bodies ORDER BY 1, 2").fetchall(),
        "search": _search_terms(conn),  # what each lesson is found by: the words indexed for its shown body
        "problems": sorted({
            (kind, "" if kind == "equivocation" else source, author or "", log or "", seq or 0)
            for kind, source, author, log, seq in conn.execute(
                "SELECT kind, source, author, log, seq FROM problems WHERE kind NOT IN "
                f"({','.join('?' * len(HISTORY_ONLY))})", HISTORY_ONLY)}),
    }


def _diff(a: dict[str, Any], b: dict[str, Any]) -> str:
    parts = []
    for key in a:
        if a[key] != b[key]:
            only_a = [x for x in a[key] if x not in b[key]]
            only_b = [x for x in b[key] if x not in a[key]]
            parts.append(f"{key}: incremental only {only_a[:4]}, rebuild only {only_b[:4]}")
    return "; ".join(parts)


# --- moves: honest ----------------------------------------------------------------------------------------

def _honest(world: World, rng: random.Random) -> Machine:
    return rng.choice([world.alice, world.bob])


@move(MOVES, "append and sync")
def append_and_sync(world: World, rng: random.Random) -> None:
    who = _honest(world, rng)
    for _ in range(rng.randint(1, 3)):
        record = rng.choice([note(f"n{rng.randrange(10**6)}", world.alice.id),
                             {"type": "citation", "lesson": "ab" * 32, "session": f"s{rng.randrange(99)}",
                              "success": rng.random() < 0.5, "tests_passed": True, "reverted": False}])
        who.append(record, log=rng.choice(["team", "project"]))
    who.run("sync")  # may be refused (a twin's entries on the remote): that is reported, never raised


@move(MOVES, "propose a lesson")
def propose_lesson(world: World, rng: random.Random) -> None:
    who = _honest(world, rng)
    who.run("lessons", "propose", "--kind", "Gotcha", "--text", f"Regenerate stubs {rng.randrange(10**6)}",
            "-e", "file:api.proto")
    who.run("sync")


@move(MOVES, "sync")
def sync(world: World, rng: random.Random) -> None:
    _honest(world, rng).run("sync")


# --- moves: hostile ---------------------------------------------------------------------------------------

def _then_a_reader_syncs(world: World, rng: random.Random) -> None:
    """What a hostile push does shows on a reader's next sync: most moves end with one."""
    if rng.random() < 0.8:
        rng.choice(world.readers).run("sync")


def _victim_log(world: World, rng: random.Random) -> tuple[Machine, str]:
    owner = rng.choice([world.alice, world.bob])
    return owner, refs.log_ref(owner.id, rng.choice(["roster", "team", "project"]))


@move(MOVES, "forge on top of a member's ref")
def forge(world: World, rng: random.Random) -> None:
    owner, ref = _victim_log(world, rng)
    chain = world.remote_entries(ref)
    below = chain[rng.randrange(len(chain))] if chain and rng.random() < 0.5 else (chain[-1] if chain else None)
    at = rng.choice([None, 1_000_000_000_000])  # honest-looking, or backdated years
    world.push(world.mallory, world.forged(owner, below, note("forged", world.alice.id), at=at,
                                           log=ref.rsplit("/", 1)[1]), ref)
    _then_a_reader_syncs(world, rng)


@move(MOVES, "re-wrap a member's entry")
def rewrap(world: World, rng: random.Random) -> None:
    _, ref = _victim_log(world, rng)
    chain = world.remote_entries(ref)
    if chain:
        entry = rng.choice(chain)
        world.push(world.mallory, hostile.rewrap(world.mallory.repo, entry, message=f"re {rng.random()}\n"), ref)
    _then_a_reader_syncs(world, rng)


@move(MOVES, "replay an old entry on top")
def replay(world: World, rng: random.Random) -> None:
    _, ref = _victim_log(world, rng)
    chain = world.remote_entries(ref)
    if len(chain) >= 2:
        old = rng.choice(chain[:-1])
        world.push(world.mallory, logs.write_commit(world.mallory.repo, old.raw, old.body, chain[-1].commit), ref)
    _then_a_reader_syncs(world, rng)


@move(MOVES, "junk chain")
def junk(world: World, rng: random.Random) -> None:
    who = rng.choice([world.alice.id, world.bob.id, world.mallory.id, "ee" * 32])
    ref = refs.log_ref(who, rng.choice(["mail", "ledger", "personal", "team"]))
    tip = hostile.junk_chain(world.mallory.clone, "refs/junk/chain", rng.randint(1, 40),
                             malformed_root=rng.random() < 0.7)
    world.push(world.mallory, tip, ref)
    _then_a_reader_syncs(world, rng)


@move(MOVES, "stranger's own log")
def stranger(world: World, rng: random.Random) -> None:
    m = world.mallory
    with _home(m):
        for _ in range(rng.randint(1, 3)):
            logs.append(m.repo, world.mallory_key, world.alice.team_id, "team", {"team": True},
                        {"type": "citation", "lesson": "ab" * 32, "session": "x", "success": True,
                         "tests_passed": True, "reverted": False})
    m.git("push", "--quiet", "--force", "origin", f"refs/hive/logs/{m.id}/team")
    _then_a_reader_syncs(world, rng)


@move(MOVES, "equivocation with a stolen key")
def equivocate(world: World, rng: random.Random) -> None:
    """bob writes (an entry or a lesson) and the stolen copy of his key writes another entry at the same place
    of the same log; both are pushed (the copy's to the remote bob uses, over bob's)."""
    twin, bob = world.twin, world.bob
    log = rng.choice(["team", "project"])
    ref = refs.log_ref(bob.id, log)
    for machine in (bob, twin):
        if log == "project" and rng.random() < 0.7:
            machine.run("lessons", "propose", "--kind", "Gotcha", "--text",
                        f"{machine.name} says {rng.randrange(10**6)}", "-e", "file:api.proto")
        else:
            machine.append(note(f"{machine.name} {rng.randrange(10**6)}", world.alice.id), log=log)
    bob.run("sync")
    if refs.tip(twin.repo, ref):
        twin.git("push", "--quiet", "--force", "origin", ref)
    _then_a_reader_syncs(world, rng)


@move(MOVES, "rollback by force-push")
def rollback(world: World, rng: random.Random) -> None:
    _, ref = _victim_log(world, rng)
    chain = world.remote_entries(ref)
    if len(chain) >= 2:
        world.push(world.mallory, rng.choice(chain[:-1]).commit, ref)
    _then_a_reader_syncs(world, rng)


# --- the state machine --------------------------------------------------------------------------------------

_ROOT: list[Path] = []


def _root() -> Path:
    """This process's place for the world (one per pytest-xdist worker), removed when the process exits."""
    if not _ROOT:
        import atexit
        import tempfile

        _ROOT.append(Path(tempfile.mkdtemp(prefix="rebuild-", dir=os.environ.get("TMPDIR"))))
        atexit.register(shutil.rmtree, _ROOT[0], True)
    return _ROOT[0]


def machine_test(moves: dict[str, Move], *, examples: int = 6, steps: int = 8) -> type:
    """A hypothesis state machine test over ``moves``; assign the result to a ``Test…`` name in a test module.

    ``GITIVE_REBUILD_EXAMPLES`` and ``GITIVE_REBUILD_STEPS`` raise the budget for a deeper run by hand.
    """
    examples = int(os.environ.get("GITIVE_REBUILD_EXAMPLES", examples))
    steps = int(os.environ.get("GITIVE_REBUILD_STEPS", steps))

    names = sorted(moves)

    class IncrementalEqualsRebuild(RuleBasedStateMachine):
        @initialize()
        def start(self) -> None:
            self.world = World.restored(_root())

        @rule(name=st.sampled_from(names), seed=st.integers(0, 2**32 - 1))
        def step(self, name: str, seed: int) -> None:
            if os.environ.get("GITIVE_REBUILD_TRACE"):
                print(f"step {name} {seed}")
            moves[name](self.world, random.Random(seed))
            self.world.steps += 1

        @invariant()
        def incremental_equals_rebuild(self) -> None:
            if hasattr(self, "world"):
                self.world.check()

        def teardown(self) -> None:
            if os.environ.get("GITIVE_REBUILD_TRACE") and hasattr(self, "world"):
                print(f"example done after {self.world.steps} steps")

    IncrementalEqualsRebuild.TestCase.settings = settings(max_examples=examples, stateful_step_count=steps,
                                                          deadline=None)
    return IncrementalEqualsRebuild.TestCase
