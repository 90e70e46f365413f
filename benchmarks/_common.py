"""Helpers shared by gitive's benchmarks: hermetic git, subprocess timing, and printing figures.

Benchmarks run the real ``git`` CLI, the real ``gitive`` CLI and gitive's library against temp directories;
nothing is mocked. Every git setting that could leak from the user's machine (global config, hooks templates,
identity) is replaced by a hermetic one under the benchmark's cache directory.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

T = TypeVar("T")

IDENTITY = ("gitive-bench", "bench@gitive.invalid")

# Variables that would point git (or gitive) at another repository or leak a user's setup into a run.
_LEAKY = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR",
          "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS",
          "GIT_CONFIG_COUNT", "GIT_TRACE", "GIT_TRACE_PACKET", "GIT_PAGER", "GIT_EDITOR", "GITIVE_HOME",
          "GITIVE_NOW_MS", "XDG_CONFIG_HOME")


def hermetic_git(base: Path) -> None:
    """Make this process, its children and libgit2 use only a git config under ``base`` (call before any git)."""
    home = base / "home"
    templates = base / "git-templates"
    empty = base / "empty-config"
    for d in (home, templates, empty):
        d.mkdir(parents=True, exist_ok=True)
    gitconfig = home / ".gitconfig"
    gitconfig.write_text(
        f"[user]\n\tname = {IDENTITY[0]}\n\temail = {IDENTITY[1]}\n"
        "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgSign = false\n[gc]\n\tauto = 0\n"
    )
    for name in _LEAKY:
        os.environ.pop(name, None)
    os.environ.update({
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": str(gitconfig),
        "GIT_TEMPLATE_DIR": str(templates),
        "GIT_TERMINAL_PROMPT": "0",
        "GITIVE_TEST_KDF": "minimum",  # seeded person keys at argon2id's minimum cost (homes under the temp dir)
    })
    import pygit2

    levels = pygit2.enums.ConfigLevel
    pygit2.settings.search_path[levels.GLOBAL] = str(home)
    for level in (levels.XDG, levels.SYSTEM, levels.PROGRAMDATA):
        pygit2.settings.search_path[level] = str(empty)


def run(cmd: Sequence[str | os.PathLike[str]], cwd: Path | str | None = None, *,
        env: dict[str, str] | None = None, input: bytes | None = None, check: bool = True) -> str:
    """Run ``cmd``; return stdout as text. Raises RuntimeError with stderr when it fails and ``check``."""
    proc = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, input=input, capture_output=True,
                          stdin=None if input is not None else subprocess.DEVNULL)
    if check and proc.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n"
                           f"{proc.stderr.decode('utf-8', 'replace')}{proc.stdout.decode('utf-8', 'replace')}")
    return proc.stdout.decode("utf-8", "replace")


def git(*args: str | os.PathLike[str], cwd: Path | str | None = None, input: bytes | None = None,
        env: dict[str, str] | None = None) -> str:
    return run(["git", *args], cwd=cwd, input=input, env=env)


def timed(fn: Callable[[], T]) -> tuple[float, T]:
    """Wall-clock seconds of ``fn()`` and its result."""
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def timed_cpu(fn: Callable[[], T]) -> tuple[float, float, T]:
    """Wall-clock and CPU seconds (this process, all threads) of ``fn()``, and its result.

    On a busy machine the wall time grows with other processes' load; the CPU time much less.
    """
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def load() -> str:
    """The 1-minute load average and the core count, to judge whether other work disturbed a run."""
    return f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"


def time_command(cmd: Sequence[str | os.PathLike[str]], cwd: Path, env: dict[str, str] | None = None) -> float:
    """Wall-clock seconds of one run of ``cmd`` as a subprocess (start-up included); it must succeed."""
    seconds, _ = timed(lambda: run(cmd, cwd=cwd, env=env))
    return seconds


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def dir_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def mib(n: int) -> str:
    return f"{n / 1024 / 1024:.1f} MiB"


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


def target(ok: bool) -> str:
    return "meets target" if ok else "MISSES target"


@contextmanager
def step(label: str) -> Iterator[None]:
    """Print ``label`` and, when the block ends, how long it took (setup steps, not the figures)."""
    print(f"  {label} ...", end="", flush=True, file=sys.stderr)
    start = time.perf_counter()
    yield
    print(f" {time.perf_counter() - start:.1f} s", flush=True, file=sys.stderr)


@contextmanager
def in_dir(work: Path, home: Path) -> Iterator[None]:
    """Run inside ``work`` with ``GITIVE_HOME=home`` (as the CLI would on that machine)."""
    old_cwd, old_home = Path.cwd(), os.environ.get("GITIVE_HOME")
    os.chdir(work)
    os.environ["GITIVE_HOME"] = str(home)
    try:
        yield
    finally:
        os.chdir(old_cwd)
        os.environ.pop("GITIVE_NOW_MS", None)
        if old_home is None:
            os.environ.pop("GITIVE_HOME", None)
        else:
            os.environ["GITIVE_HOME"] = old_home


def seed_repo(target: Path, paths: Sequence[str]) -> tuple[Path, Path, Path]:
    """A bare remote and a clone whose first commit holds ``paths``; return (remote, work, home)."""
    remote, work, home = target / "remote.git", target / "work", target / "home"
    git("init", "--quiet", "--bare", remote)
    git("clone", "--quiet", f"file://{remote}", work)
    for path in paths:
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_text(f"# {path}\n")
    git("add", "--", *paths, cwd=work)
    git("commit", "--quiet", "-m", "the application", cwd=work)
    git("push", "--quiet", "origin", "HEAD:refs/heads/main", cwd=work)
    return remote, work, home


BENCH_PASSPHRASE = "benchmark passphrase"  # the seeded person keys'; they are created at argon2id's minimum cost


def person_key(home: Path) -> Any:
    """The person key of ``home`` (created if missing) unlocked: what a person types their passphrase for."""
    from gitive.core import personkey

    path = home / "person.key"
    if not path.exists():
        personkey.create(BENCH_PASSPHRASE, personkey.MINIMUM, path)
    return personkey.unlock(personkey.load(path), BENCH_PASSPHRASE)


def run_deciding(argv: list[str], home: Path) -> int:
    """``gitive argv --passphrase-stdin`` in-process, with ``home``'s person key's passphrase on stdin."""
    import io

    from gitive.cli.main import run as gitive

    person_key(home)
    saved, sys.stdin = sys.stdin, io.StringIO(BENCH_PASSPHRASE + "\n")
    try:
        return gitive([*argv, "--passphrase-stdin"])
    finally:
        sys.stdin = saved


class Founded(NamedTuple):
    """A benchmark's team: its bare remote, the founder's clone and home, and what signs the founder's entries."""

    remote: Path
    work: Path
    home: Path
    team_id: str
    founder: str
    key: Any  # the founder's machine key
    signer: Any  # the founder's person key, unlocked: it gestures admissions


def found_team(base: Path, person: str = "alice", machine: str = "founder-box", team: str = "bench-team"
               ) -> Founded:
    """A bare remote under ``base``, the founder's clone of it with one commit on ``main``, and a gitive team
    founded there with ``gitive.enrolment.ops.found`` (the founder's person key created at test cost)."""
    from gitive.core.keys import load_key
    from gitive.enrolment import ops

    remote, work, home = base / "remote.git", base / "founder-work", base / "founder-home"
    git("init", "--quiet", "--bare", remote)
    git("clone", "--quiet", f"file://{remote}", work)
    (work / "README").write_text("gitive benchmark\n")
    git("add", "README", cwd=work)
    git("commit", "--quiet", "-m", "first commit", cwd=work)
    git("push", "--quiet", "origin", "HEAD:refs/heads/main", cwd=work)
    os.environ["GITIVE_HOME"] = str(home)
    try:
        signer = person_key(home)
        founded = ops.found(work, person, machine, team, signer=signer)
        key = load_key(home / "machine.key")
    finally:
        os.environ.pop("GITIVE_HOME", None)
    return Founded(remote, work, home, founded.team_id, founded.machine, key, signer)


def admit(team: Founded, members: Sequence[tuple[str, str, str]], role: str = "member") -> None:
    """The founder admits each ``(machine id, person, machine name)`` with a gestured roster entry
    (``logs.append``, as ``gitive invite``/``join`` would end up recording it); nothing is pushed."""
    import pygit2

    from gitive.core import gesture
    from gitive.enrolment import ops
    from gitive.store import logs

    repo = pygit2.Repository(str(team.work))
    for machine, person, name in members:
        record = ops.member_record(machine, person, name, [], None, role=role)
        logs.append(repo, team.key, team.team_id, "roster", {"team": True},
                    gesture.sign(team.signer, team.team_id, team.founder, record))


def fast_import(remote: Path, stream: Callable[[Any], bytes], jobs: Sequence[Any], chunksize: int = 1) -> None:
    """Write the ``git fast-import`` commands ``stream`` makes for each job (in worker processes) into ``remote``."""
    import multiprocessing

    proc = subprocess.Popen(["git", "fast-import", "--quiet", "--done"], cwd=remote, stdin=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdin is not None
    with multiprocessing.get_context("fork").Pool(os.cpu_count() or 1) as pool:
        for chunk in pool.imap(stream, jobs, chunksize=chunksize):
            proc.stdin.write(chunk)
    proc.stdin.write(b"done\n")
    proc.stdin.close()
    if proc.wait() != 0:
        raise RuntimeError(f"git fast-import failed: {proc.stderr.read().decode() if proc.stderr else ''}")


def seeded_key(label: bytes, index: int) -> Any:
    """Machine ``index``'s signing key under ``label``, derived from its number (the same in every run)."""
    import blake3
    from nacl.signing import SigningKey

    return SigningKey(blake3.blake3(b"%s/%d" % (label, index)).digest())


def seeded_machine(label: bytes, index: int) -> str:
    from gitive.core.keys import machine_id

    return machine_id(seeded_key(label, index))


def hex_of(seed: bytes) -> str:
    """A stable 64-hex id from ``seed``: synthetic records are the same in every run, so caches stay valid."""
    import blake3

    return blake3.blake3(seed).hexdigest()


def ulid_of(at: int, seed: bytes) -> str:
    """A ULID for time ``at`` (ms) whose random part comes from ``seed``."""
    alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
    value = (at << 80) | int.from_bytes(hex_of(seed).encode()[:10], "big")
    return "".join(alphabet[(value >> (5 * i)) & 31] for i in reversed(range(26)))


def log_stream(out: Any, key: Any, team_id: str, me: str, log: str, items: Any) -> None:
    """Write one machine's log to ``out`` as ``git fast-import`` commands: signed v2 entries, each naming the
    previous one's hash in ``prev``, from ``items`` of ``(at, scope, record)``.

    Each commit is what ``logs.append`` writes: tree ``{entry.json}``, author = committer =
    ``<id[:16]> <<id>@hive> <at // 1000> +0000``, message ``summary(entry) + "\\n"``, parent = previous entry.
    """
    from gitive.core import canonical, signed
    from gitive.store import logs, refs

    ref = refs.log_ref(me, log)
    prev = None
    for seq, (at, scope, record) in enumerate(items, 1):
        entry = {"v": 2, "author": me, "log": log, "scope": scope, "seq": seq, "at": at, "record": record}
        if prev:
            entry["prev"] = prev
        data = canonical.dumps(signed.sign(key, team_id, record["type"], entry))
        prev = logs.entry_hash(data)
        message = (logs.summary(entry) + "\n").encode()
        who = f"{me[:16]} <{me}@hive> {at // 1000} +0000"
        out.write(f"commit {ref}\nauthor {who}\ncommitter {who}\ndata {len(message)}\n".encode())
        out.write(message)
        out.write(f"M 100644 inline entry.json\ndata {len(data)}\n".encode())
        out.write(data)
        out.write(b"\n\n")
