"""The team the real harnesses work in: alice and bob around one bare remote, with lessons reviewed by a person.

Built once per test session with the real CLI and library (:class:`testing.machines.Fleet` founds and invites,
bob's agent proposes lessons, alice reviews them with her person key, both sync), kept as a snapshot, and put
back in place before each test (:class:`Slot`), so every test starts from the same clones, homes and remote
and no test sees another's sessions, messages or edits. It is put back at the very same path: a project's id
is derived from its remote's URL (here the remote's path) and a home records its clones' paths, so a copy
elsewhere would be another project to gitive.

The lessons are chosen so each delivery is told apart by what reaches the model:

- five recent verified lessons make the session **card** (the card holds the five newest);
- ``settings`` (verified, older) cites ``src/app/settings.py``: it reaches the model only after an **edit**
  of that file;
- ``retry`` (verified, oldest) is about ``net/retry.py`` and flaky integration tests: only **prompt-time
  recall** of a prompt naming them brings it;
- ``unreviewed`` cites ``src/app/settings.py`` too but was never reviewed: it must never reach a model.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from testing import fixtures, live
from testing.machines import Fleet, Machine

HOUR_MS = 3_600_000
GITIVE = Path(sys.executable).with_name("gitive")
FILES = ("src/app/settings.py", "src/app/cache.py", "src/db/migrate.py", "net/retry.py", "web/views.py",
         "docs/deploy.md", "ci/pipeline.yml", "README.md")


@dataclass(frozen=True)
class Lesson:
    key: str
    id: str
    text: str
    file: str
    verified: bool

    @property
    def short(self) -> str:
        """The id as a frame shows it."""
        return self.id[:16]


# key, text, cited file, reviewed, hours ago
PLAN: tuple[tuple[str, str, str, bool, int], ...] = (
    ("retry", "The integration tests flake around net/retry.py because RetryPolicy sleeps on the wall clock; "
              "inject FakeClock in the fixture instead of patching time.sleep.", "net/retry.py", True, 72),
    ("settings", "settings.py reads SETTINGS_PATH once at import; after changing it call reload_settings() or "
                 "the tests keep seeing the old values.", "src/app/settings.py", True, 60),
    ("unreviewed", "Settings can be edited freely while the server runs; it watches the file.",
     "src/app/settings.py", False, 50),
    ("migrate", "alembic upgrade fails with 'Multiple head revisions are present' after two branches each add a "
                "migration; run alembic merge heads, then upgrade again.", "src/db/migrate.py", True, 5),
    ("cache", "The cache module keys entries by tenant and path; clear it with cache.flush(tenant) after a "
              "schema change or old rows come back.", "src/app/cache.py", True, 4),
    ("views", "web/views.py renders dates in the server's zone; pass tz=request.user.tz to format_date.",
     "web/views.py", True, 3),
    ("deploy", "A deploy needs the DB_MIGRATE=1 flag on the first host only; the others wait for its lock.",
     "docs/deploy.md", True, 2),
    ("pipeline", "The CI pipeline caches node_modules by the lockfile's hash; bump CACHE_EPOCH to drop it.",
     "ci/pipeline.yml", True, 1),
)
CARD = ("pipeline", "deploy", "views", "cache", "migrate")  # the five newest verified: the card, newest first


@dataclass
class Team:
    base: Path
    alice: Machine  # the person whose agent the harness runs; founder, reviews lessons
    bob: Machine  # a teammate; his agent proposed the lessons
    lessons: dict[str, Lesson]

    @property
    def remote(self) -> Path:
        return self.base / live.REMOTE

    def lesson(self, key: str) -> Lesson:
        return self.lessons[key]

    def card(self) -> list[Lesson]:
        return [self.lessons[k] for k in CARD]

    def harness_home(self, harness: str) -> Path:
        """A HOME of its own for one harness run (under the team, so the next test starts without it)."""
        home = self.base / f"{harness}-home"
        home.mkdir(exist_ok=True)
        return home


def build(base: Path) -> Team:
    """Found the team (alice), invite bob, have bob's agent propose the lessons and alice review them."""
    fleet = Fleet(base)
    remote = fixtures.init_bare(base / live.REMOTE)
    seed = fixtures.clone(remote, base / "seed")
    for name in FILES:
        fixtures.commit_file(seed, name, f"# {name}\n")
    fixtures.run_git(["push", "--quiet", "origin", "HEAD:main"], cwd=seed)
    alice, bob = fleet.team(remote, ("alice", "alice"), ("bob", "bob"))
    now = time.time_ns() // 1_000_000
    ids = {key: _propose(bob, text, path, now - hours * HOUR_MS) for key, text, path, _, hours in PLAN}
    bob.ok("sync")
    alice.ok("sync")
    for key, _, _, reviewed, hours in PLAN:
        if reviewed:
            _review(alice, ids[key], now - hours * HOUR_MS + 60_000)
    alice.ok("sync")
    bob.ok("sync")
    lessons = {key: Lesson(key, ids[key], text, path, reviewed) for key, text, path, reviewed, _ in PLAN}
    _check(alice, lessons)
    return Team(base, alice, bob, lessons)


class Slot:
    """One place a team lives in, restored from its snapshot for each test (tests in one worker take turns)."""

    def __init__(self, base: Path) -> None:
        self.base = base  # keep it short: homes under it hold daemon.sock (AF_UNIX paths: 108 bytes)
        self.place = base / "team"
        self.snapshot = base / "snapshot"
        self._team: Team | None = None

    def fresh(self) -> Team:
        """The team as built, in place (built the first time)."""
        if self._team is None:
            self._team = build(self.place)
            shutil.copytree(self.place, self.snapshot, symlinks=True)
            return self._team
        shutil.rmtree(self.place)
        shutil.copytree(self.snapshot, self.place, symlinks=True)
        return self._team


def _propose(machine: Machine, text: str, path: str, at: int) -> str:
    out = machine.ok("lessons", "propose", "--kind", "Gotcha", "--text", text, "-e", f"file:{path}",
                     env={"GITIVE_NOW_MS": str(at)}).out.strip()
    assert len(out) == 64, out
    return out


def _review(machine: Machine, lesson: str, at: int) -> None:
    from gitive.index.refresh import fresh_index
    from gitive.lessons.review import review
    from gitive.team.hive import open_hive

    with live.on(machine), _now(at), contextlib.redirect_stdout(io.StringIO()):
        hive = open_hive(machine.clone)
        with fresh_index(hive) as (conn, _):
            review(hive, conn, lesson, approved=True, note="", signer=machine.signer)


@contextlib.contextmanager
def _now(at: int) -> Iterator[None]:
    saved = os.environ.get("GITIVE_NOW_MS")
    os.environ["GITIVE_NOW_MS"] = str(at)
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("GITIVE_NOW_MS", None)
        else:
            os.environ["GITIVE_NOW_MS"] = saved


def _states(machine: Machine) -> dict[str, str]:
    from gitive.index.refresh import fresh_index
    from gitive.team.hive import open_hive

    with live.on(machine), fresh_index(open_hive(machine.clone)) as (conn, _):
        return dict(conn.execute("SELECT lesson, state FROM lesson_status").fetchall())


def _check(machine: Machine, lessons: dict[str, Lesson]) -> None:
    states = _states(machine)
    for lesson in lessons.values():
        want = "verified" if lesson.verified else "proposed"
        assert states.get(lesson.id) == want, f"{lesson.key}: {states.get(lesson.id)} (want {want})"




def gitive(machine: Machine, *args: str, stdin: str = "", check: bool = True, timeout: float = 120
           ) -> subprocess.CompletedProcess[str]:
    """The real ``gitive`` command as a process in ``machine``'s clone with its home, as its person runs it."""
    from gitive.lessons.gate import AGENT_ENV

    env = {k: v for k, v in os.environ.items() if k not in AGENT_ENV}
    env["GITIVE_HOME"] = str(machine.home)
    env.pop("GITIVE_NOW_MS", None)
    done = subprocess.run([str(GITIVE), *args], cwd=machine.clone, env=env, input=stdin, text=True,
                          capture_output=True, timeout=timeout)
    if check and done.returncode != 0:
        raise AssertionError(f"gitive {' '.join(args)} on {machine.name} exited {done.returncode}:\n"
                             f"{done.stdout}\n{done.stderr}")
    return done


def install(machine: Machine, harness: str) -> str:
    """``gitive install --harness <harness> --git-hooks`` in ``machine``'s clone; what it printed."""
    return gitive(machine, "install", "--harness", harness, "--git-hooks").stdout
