"""Workers: the commands the anchor runs on a task, named in ``anchor.yaml`` on the anchor machine.

```yaml
workers:
  fix-test:                          # a deterministic transform: a codemod, a dependency bump, a formatter
    command: ["python3", "/opt/tools/fix_test.py"]
    budget: 600                      # default wall time of its tasks, seconds
  claude:                            # a headless agent harness, the brief on stdin
    command: ["claude", "-p", "--output-format", "json", "--permission-mode", "acceptEdits"]
    secrets: [ANTHROPIC_API_KEY]     # taken from the anchor's environment, by name; nothing else is passed
    budget: 1800
    sandbox:
      read: ["/opt/claude"]          # read-only paths beside the system's (its install, its interpreter)
      network: host                  # none (the default: a network of its own, loopback only) or host
prepared:
  worker: fix-test                   # the worker of a task that names none (`gitive hand` without --worker)
```

A worker runs in the task's clean worktree with the brief on stdin and an environment built from nothing: a
fresh, empty ``HOME`` per run (no ambient config, hooks, MCP servers or trust decisions of the anchor's user),
``PATH``, the locale, the listed secrets, and ``GITIVE_TASK``, ``GITIVE_QUESTION_FILE``. Its output is kept
locally (``$GITIVE_HOME/prepared/<task>.log``, 0600) with every secret's value replaced; the environment is never
written anywhere. Past its budget the whole process group is killed. A worker that needs a person's decision
writes the question to ``$GITIVE_QUESTION_FILE`` and exits; the task stops there.

Every run (the worker, and the tests before and after it) is inside bubblewrap (:mod:`.sandbox`): it cannot
read ``$GITIVE_HOME``, the anchor's environment, its repository's config or other processes, and reaches the
network only with ``network: host``. Workers are configured on the anchor machine only, like watchers: the
shared repository (which anyone who can push could change) never names a command to run.
"""

from __future__ import annotations

import contextlib
import os
import signal
import stat
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitive.anchor.base.configuration import ConfigError, command_words
from gitive.anchor.prepared import sandbox
from gitive.core.ids import is_name

DEFAULT_BUDGET = 1800  # seconds
MAX_BUDGET = 24 * 3600
_WORKER_KEYS = {"command", "secrets", "budget", "sandbox"}
_SANDBOX_KEYS = {"read", "network"}
_ENV_NAME_OK = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_PASSED = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "SYSTEMROOT")
QUESTION_FILE = "GITIVE_QUESTION_FILE"
KEEP_LOG = 64 * 1024  # bytes of a worker's output kept in its local log


@dataclass(frozen=True)
class Worker:
    name: str
    command: tuple[str, ...]
    secrets: tuple[str, ...] = ()
    budget: int = DEFAULT_BUDGET
    policy: sandbox.Policy = field(default_factory=sandbox.Policy)


@dataclass(frozen=True)
class Run:
    """What one command did: exit code (None: killed at its budget), seconds, the question it left, its output."""

    code: int | None
    seconds: float
    question: str = ""
    output: str = ""
    problem: str = ""  # could not start, or a secret it needs is missing

    @property
    def over_budget(self) -> bool:
        return self.code is None and not self.problem


@dataclass
class Environment:
    """The environment of one run, made from nothing; ``secrets`` are the values to scrub from any output."""

    values: dict[str, str] = field(default_factory=dict)
    secrets: list[str] = field(default_factory=list)


def parse(path: Path, data: Any) -> dict[str, Worker]:
    """The ``workers:`` section of ``anchor.yaml``.

    Raises:
        ConfigError: a bad name, command, secret name or budget (the message says which).
    """
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: `workers` must map a name to its command")
    return {name: _worker(path, name, spec) for name, spec in data.items()}


def _worker(path: Path, name: Any, spec: Any) -> Worker:
    where = f"{path}: worker {name!r}"
    if not is_name(name):
        raise ConfigError(f"{path}: worker name {name!r} is not allowed: use 1-64 of a-z, 0-9 and -")
    if not isinstance(spec, dict) or "command" not in spec:
        raise ConfigError(f"{where} needs a `command` (a list of words, or a string)")
    unknown = set(spec) - _WORKER_KEYS
    if unknown:
        raise ConfigError(f"{where} has unknown keys {', '.join(sorted(map(str, unknown)))}; known: command, "
                          "secrets, budget, sandbox")
    words = command_words(f"{where}: `command`", spec["command"])
    secrets = spec.get("secrets") or []
    if not isinstance(secrets, list) or not all(isinstance(s, str) and s and set(s) <= _ENV_NAME_OK
                                                and not s[0].isdigit() for s in secrets):
        raise ConfigError(f"{where}: `secrets` must be a list of environment variable names")
    budget = spec.get("budget", DEFAULT_BUDGET)
    if isinstance(budget, bool) or not isinstance(budget, int) or not 1 <= budget <= MAX_BUDGET:
        raise ConfigError(f"{where}: `budget` must be a whole number of seconds from 1 to {MAX_BUDGET}")
    return Worker(name, words, tuple(secrets), budget, _policy(where, spec.get("sandbox")))


def _policy(where: str, spec: Any) -> sandbox.Policy:
    if spec is None:
        return sandbox.Policy()
    if not isinstance(spec, dict) or set(spec) - _SANDBOX_KEYS:
        raise ConfigError(f"{where}: `sandbox` takes `read` (a list of absolute paths) and `network` "
                          f"({' or '.join(sandbox.NETWORKS)})")
    read = spec.get("read") or []
    if not isinstance(read, list) or not all(isinstance(r, str) and r.startswith("/") for r in read):
        raise ConfigError(f"{where}: `sandbox.read` must be a list of absolute paths")
    network = spec.get("network", "none")
    if network not in sandbox.NETWORKS:
        raise ConfigError(f"{where}: `sandbox.network` must be {' or '.join(sandbox.NETWORKS)}, not {network!r}")
    return sandbox.Policy(tuple(read), network)


def environment(worker: Worker | None, home: Path, extra: dict[str, str], source: dict[str, str] | None = None
                ) -> Environment:
    """The environment a run gets: only what is listed here and the worker's secrets (from ``source``,
    default the anchor's own environment).

    Raises:
        ConfigError: a secret the worker lists is not set where the anchor runs.
    """
    source = os.environ if source is None else source
    env = Environment()
    for name in _PASSED:
        if name in source:
            env.values[name] = source[name]
    env.values.setdefault("PATH", os.defpath)
    env.values.update({"HOME": str(home), "TMPDIR": str(home / "tmp"), "TERM": "dumb",
                       "GIT_TERMINAL_PROMPT": "0", "GIT_CONFIG_NOSYSTEM": "1",
                       "GIT_CONFIG_GLOBAL": str(home / ".gitconfig")})
    env.values.update(extra)
    for name in worker.secrets if worker else ():
        value = source.get(name)
        if not value:
            raise ConfigError(f"worker {worker.name!r} needs the secret {name}, which is not set in the "  # type: ignore[union-attr]
                              "anchor's environment; set it where the anchor runs (never in the repository)")
        env.values[name] = value
        env.secrets.append(value)
    return env


def fresh_home(parent: Path) -> Path:
    """An empty home for one run (0700), with its own temp directory."""
    parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    home = Path(tempfile.mkdtemp(prefix="home-", dir=parent))
    (home / "tmp").mkdir(mode=0o700)
    return home


def scrub(text: str, secrets: list[str]) -> str:
    for value in sorted(secrets, key=len, reverse=True):
        if len(value) >= 4:
            text = text.replace(value, "[REDACTED]")
    return text


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def run(command: list[str] | tuple[str, ...], cwd: Path, env: Environment, timeout: float, stdin: str = "",
        question_file: Path | None = None, policy: sandbox.Policy | None = None,
        mounts: sandbox.Mounts | None = None) -> Run:
    """Run ``command`` inside the sandbox (:mod:`.sandbox`), in its own process group; killed with its children
    at ``timeout`` seconds. ``cwd`` and ``HOME`` are writable, ``mounts`` adds to them; ``$GITIVE_HOME`` is
    never visible."""
    start = time.monotonic()
    if timeout <= 0:
        return Run(None, 0.0)
    try:
        argv = sandbox.command(policy or sandbox.Policy(), _mounts(cwd, env, mounts), cwd, command)
    except FileNotFoundError as exc:
        return Run(None, 0.0, problem=str(exc))
    code, data = _spawn(argv, cwd, env, timeout, stdin)
    if code == "cannot start":
        return Run(None, 0.0, problem=f"cannot start {command[0]!r}: {data.decode()}")
    text = scrub(data[-KEEP_LOG:].decode("utf-8", "replace"), env.secrets)
    question = scrub(read_plain(question_file, 8000), env.secrets).strip()[:2000] if question_file else ""
    return Run(code if not isinstance(code, str) else None, time.monotonic() - start, question, text)


def _mounts(cwd: Path, env: Environment, extra: sandbox.Mounts | None) -> sandbox.Mounts:
    from gitive.core.home import gitive_home

    extra = extra or sandbox.Mounts(())
    return sandbox.Mounts((cwd, Path(env.values["HOME"]), *extra.writable), extra.read,
                          (*extra.hidden, gitive_home()))


def _spawn(argv: list[str], cwd: Path, env: Environment, timeout: float, stdin: str
           ) -> tuple[int | str | None, bytes]:
    """Start ``argv`` (bwrap, with the worker's environment only: its pid 1 inside shows nothing else) and wait;
    the exit code (None: killed at ``timeout``) and its output."""
    out_path = Path(env.values["HOME"]) / f"out-{os.getpid()}-{time.monotonic_ns()}"
    try:
        with out_path.open("w+b") as out:
            try:
                proc = subprocess.Popen(argv, cwd=cwd, env=env.values, stdin=subprocess.PIPE, stdout=out,
                                        stderr=subprocess.STDOUT, start_new_session=True)
            except OSError as exc:
                return "cannot start", str(exc.strerror or exc).encode()
            try:
                if proc.stdin is not None:
                    # A worker may exit without reading all of it (``sed …``): the close flushes what is left and
                    # would raise then too (it still closes the pipe); the exit code says how the worker did.
                    with contextlib.suppress(BrokenPipeError):
                        proc.stdin.write(stdin.encode())
                    with contextlib.suppress(BrokenPipeError):
                        proc.stdin.close()
                code: int | None = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                _kill(proc)
                code = None
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)  # what it left running in the background goes too
            out.seek(0)
            return code, out.read()
    finally:
        out_path.unlink(missing_ok=True)


def read_plain(path: Path, limit: int) -> str:
    """At most ``limit`` bytes of ``path`` if it is a regular file, never through a symbolic link: the worker
    wrote it, and a link to ``machine.key`` must not become a question its owner is shown."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return ""
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        return fh.read(limit).decode("utf-8", "replace")
