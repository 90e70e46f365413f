"""Helpers for lesson tests: run ``gitive`` as a person at a real pseudo-terminal, and small git builders.

Reviews, retractions and project confirmations need a TTY and an explicit ``y``, and refuse inside an agent
harness (``gitive.lessons.gate.AGENT_ENV``). :func:`run_in_pty` runs the installed console script in a child
process whose stdin, stdout and stderr are the slave side of a new pseudo-terminal, answers prompts as they
appear, and returns the exit code and everything the child printed.
"""

from __future__ import annotations

import fcntl
import os
import select
import signal
import sqlite3
import subprocess
import sys
import termios
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

from gitive.lessons.gate import AGENT_ENV
from testing import fixtures, people, teams
from testing.machines import Fleet, Machine, share_file

GITIVE = Path(sys.executable).with_name("gitive")


class PtyTimeout(AssertionError):
    """The child did not show an expected prompt, or did not exit, in time (its output is in the message)."""


def person_env(home: Path | str, base: Mapping[str, str] | None = None, **extra: str) -> dict[str, str]:
    """The environment of a person's terminal: the test's (hermetic git) environment, ``GITIVE_HOME``,
    no agent-harness variable, plain output (no colour, wide lines), and ``extra`` on top."""
    env = dict(os.environ if base is None else base)
    for name in AGENT_ENV:
        env.pop(name, None)
    env.pop("GITIVE_NOW_MS", None)
    env.update({"GITIVE_HOME": str(home), "NO_COLOR": "1", "TERM": "dumb", "COLUMNS": "200", "LINES": "50"})
    env.update(extra)
    return env


def _take_terminal() -> None:
    """In the child, after ``setsid``: make the pty (its stdin) the controlling terminal, as a login shell's
    is, so that ``^C`` typed on it interrupts the foreground process."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def _read(master: int, wait: float) -> bytes | None:
    """Up to 64 KiB from ``master`` within ``wait`` seconds: b"" if nothing came, None at end of output."""
    ready, _, _ = select.select([master], [], [], wait)
    if not ready:
        return b""
    try:
        data = os.read(master, 65536)
    except OSError:  # EIO: every slave descriptor is closed, the child is gone
        return None
    return data or None


def run_in_pty(args: Sequence[str], cwd: Path | str, env: Mapping[str, str],
               answers: Sequence[tuple[str, str]] = (), timeout: float = 30.0) -> tuple[int, str]:
    """Run ``gitive *args`` in ``cwd`` with ``env`` on a new pseudo-terminal; return ``(exit code, output)``.

    ``answers`` are ``(prompt text, reply)`` pairs, in order: once ``prompt text`` shows up in the output
    (after where the previous prompt was found), ``reply`` is typed (add ``"\\n"`` yourself). Output is
    stdout and stderr interleaved as the terminal showed them, with ``\\r\\n`` turned into ``\\n``; typed
    replies appear in it too, since the terminal echoes them.

    Raises:
        PtyTimeout: a prompt did not appear, or the child did not exit, within ``timeout`` seconds.
    """
    master, slave = os.openpty()
    try:
        proc = subprocess.Popen([str(GITIVE), *args], cwd=cwd, env=dict(env), stdin=slave, stdout=slave,
                                stderr=slave, close_fds=True, start_new_session=True, preexec_fn=_take_terminal)
    finally:
        os.close(slave)
    out = bytearray()
    pending = list(answers)
    searched = 0  # prompts are looked for after the previous one
    deadline = time.monotonic() + timeout
    try:
        while True:
            if time.monotonic() > deadline:
                raise PtyTimeout(f"gitive {' '.join(args)}: no exit after {timeout}s; waiting for "
                                 f"{pending[0][0] if pending else 'exit'!r}; output so far:\n"
                                 f"{out.decode('utf-8', 'replace')}")
            chunk = _read(master, 0.05)
            if chunk is None:
                break
            out += chunk
            while pending:
                at = out.find(pending[0][0].encode(), searched)
                if at < 0:
                    break
                prompt, reply = pending.pop(0)
                searched = at + len(prompt.encode())
                os.write(master, reply.encode())
        code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    except BaseException:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        raise
    finally:
        os.close(master)
    text = out.decode("utf-8", "replace").replace("\r\n", "\n")
    if pending:
        raise PtyTimeout(f"gitive {' '.join(args)} exited {code} before prompt {pending[0][0]!r}:\n{text}")
    return code, text


def commit_as(repo: Path, name: str, content: str, message: str, email: str, *,
              date: str | None = None) -> str:
    """Commit ``name`` with ``content`` authored by ``email`` (dated now unless ``date``); return the id.

    The hermetic environment pins author dates to 2024; history-based choices ("last 30 days") need now.
    """
    target = repo / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content)
    fixtures.run_git(["add", "--", name], cwd=repo)
    when = date or time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime())
    env = {**os.environ, "GIT_AUTHOR_EMAIL": email, "GIT_AUTHOR_DATE": when, "GIT_COMMITTER_DATE": when}
    subprocess.run(["git", "commit", "--quiet", "--no-verify", "--no-gpg-sign", "-m", message, "--", name],
                   cwd=repo, env=env, check=True, capture_output=True, stdin=subprocess.DEVNULL)
    return fixtures.run_git(["rev-parse", "HEAD"], cwd=repo).strip()


def as_person(machine: Machine, *args: str, answers: Sequence[tuple[str, str]] = (), timeout: float = 30.0,
              **extra: str) -> tuple[int, str]:
    """Run ``gitive *args`` on ``machine`` (its clone and home) as a person at a terminal."""
    return run_in_pty(args, machine.clone, person_env(machine.home, **extra), answers, timeout)


PASSPHRASE_PROMPT = "Passphrase of your person key"
# The answer to that prompt, for ``as_person(..., answers=[..., PASSPHRASE_ANSWER])``.
PASSPHRASE_ANSWER = (PASSPHRASE_PROMPT, people.PASSPHRASE + "\n")


def confirmed(machine: Machine, *args: str, prompt: str = "Sign this", **extra: str) -> str:
    """Run a command that asks for one confirmation on ``machine``'s terminal, answer ``y`` and then the
    person key's passphrase; require exit 0."""
    people.person_key(machine.home)
    code, out = as_person(machine, *args, answers=[(prompt, "y\n"), PASSPHRASE_ANSWER], **extra)
    assert code == 0, f"gitive {' '.join(args)} on {machine.name}: exit {code}\n{out}"
    return out


def propose(machine: Machine, text: str, *args: str, kind: str = "Gotcha", evidence: Sequence[str] = (
        "file:api.proto", "commit:HEAD")) -> str:
    """``gitive lessons propose`` on ``machine``; require exit 0 and return the printed id."""
    cites = [a for e in evidence for a in ("-e", e)]
    out = machine.ok("lessons", "propose", "--kind", kind, "--text", text, *cites, *args).out.strip()
    assert len(out) == 64, out
    return out


def reviewed_with_edit(trio: Sequence[Machine], text: str, edit: str) -> str:
    """alice's agent proposes ``text``; alice confirms bob as a project member; bob approves it with ``edit`` at
    his terminal; everyone syncs, so the original and the edit are on every machine and the remote. Returns the
    lesson's id."""
    a, b, c = trio
    lesson = propose(a, text)
    code, out = as_person(a, "project", "confirm", "bob", answers=[("Confirm bob", "y\n"), PASSPHRASE_ANSWER])
    assert code == 0, out
    for m in (a, b):
        m.ok("sync")
    confirmed(b, "review", "approve", lesson, "--text", edit)
    for m in (b, a, c):
        m.ok("sync")
    return lesson


def hive_tips(machine: Machine) -> dict[str, str]:
    """Every ``refs/hive*`` tip in every repository this machine writes to: its clone, the team store under
    its home, and its personal store; keys are ``<repository>:<ref>``."""
    found: dict[str, str] = {}
    repos = [machine.clone, *sorted((machine.home / "teams").glob("*.git")), machine.home / "personal.git"]
    for repo in repos:
        if repo.exists():
            for name, tip in fixtures.ref_tips(repo, "refs/hive").items():
                found[f"{repo}:{name}"] = tip
    return found


def index_db(machine: Machine) -> sqlite3.Connection:
    """The machine's index (of the store in its clone), opened read-only."""
    path = machine.clone / ".git" / "gitive" / "index.sqlite"
    return sqlite3.connect(f"file:{path}?mode=ro", uri=True)


def reachable_blobs(repo: Path | str) -> dict[str, bytes]:
    """Every blob reachable from any ref of ``repo`` (as the git CLI sees it): id -> content."""
    listing = fixtures.run_git(["rev-list", "--objects", "--all"], cwd=repo)
    ids = [line.split(" ", 1)[0] for line in listing.splitlines() if line]
    if not ids:
        return {}
    import pygit2

    store = pygit2.Repository(str(repo))
    objs = (store[i] for i in dict.fromkeys(ids))
    return {str(o.id): o.data for o in objs if isinstance(o, pygit2.Blob)}


def _trio(live: Path) -> None:
    fleet = Fleet(live / teams.FLEET)
    remote = fixtures.init_bare(live / teams.REMOTE)
    share_file(fleet.team(remote, ("alice", "a"), ("bob", "b"), ("carol", "c")))


def restored_trio(place: teams.Place) -> list[Machine]:
    """Machines a (alice, founder and project owner), b (bob) and c (carol) around ``place.live``'s remote, all
    synced, sharing ``api.proto``: founded once per test process, restored for each test (``testing.teams``)."""
    place.restore("lessons-trio", _trio)
    fleet = Fleet(place.live / teams.FLEET)
    return [fleet.known(name) for name in ("a", "b", "c")]
