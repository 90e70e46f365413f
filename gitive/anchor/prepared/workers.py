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
prepared:
  worker: fix-test                   # the worker of a task that names none (`gitive hand` without --worker)
```

A worker runs in the task's clean worktree with the brief on stdin and an environment built from nothing: a
fresh, empty ``HOME`` per run (no ambient config, hooks, MCP servers or trust decisions of the anchor's user),
``PATH``, the locale, the listed secrets, and ``GITIVE_TASK``, ``GITIVE_QUESTION_FILE``. Its output is kept
locally (``$GITIVE_HOME/prepared/<task>.log``, 0600) with every secret's value replaced; the environment is never
written anywhere. Past its budget the whole process group is killed. A worker that needs a person's decision
writes the question to ``$GITIVE_QUESTION_FILE`` and exits; the task stops there.

Workers are configured on the anchor machine only, like watchers: they run with the anchor user's rights, and
the shared repository (which anyone who can push could change) never names a command to run.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitive.anchor.base.configuration import ConfigError, command_words
from gitive.core.ids import is_name

DEFAULT_BUDGET = 1800  # seconds
MAX_BUDGET = 24 * 3600
_WORKER_KEYS = {"command", "secrets", "budget"}
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
                          "secrets, budget")
    words = command_words(f"{where}: `command`", spec["command"])
    secrets = spec.get("secrets") or []
    if not isinstance(secrets, list) or not all(isinstance(s, str) and s and set(s) <= _ENV_NAME_OK
                                                and not s[0].isdigit() for s in secrets):
        raise ConfigError(f"{where}: `secrets` must be a list of environment variable names")
    budget = spec.get("budget", DEFAULT_BUDGET)
    if isinstance(budget, bool) or not isinstance(budget, int) or not 1 <= budget <= MAX_BUDGET:
        raise ConfigError(f"{where}: `budget` must be a whole number of seconds from 1 to {MAX_BUDGET}")
    return Worker(name, words, tuple(secrets), budget)


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
        question_file: Path | None = None) -> Run:
    """Run ``command`` in its own process group; killed with its children at ``timeout`` seconds."""
    start = time.monotonic()
    if timeout <= 0:
        return Run(None, 0.0)
    out_path = Path(env.values["HOME"]) / f"out-{os.getpid()}-{time.monotonic_ns()}"
    try:
        with out_path.open("w+b") as out:
            try:
                proc = subprocess.Popen(list(command), cwd=cwd, env=env.values, stdin=subprocess.PIPE,
                                        stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
            except OSError as exc:
                return Run(None, 0.0, problem=f"cannot start {command[0]!r}: {exc.strerror or exc}")
            try:
                if proc.stdin is not None:
                    with contextlib.suppress(BrokenPipeError):
                        proc.stdin.write(stdin.encode())
                    proc.stdin.close()
                code: int | None = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                _kill(proc)
                code = None
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)  # what it left running in the background goes too
            out.seek(0)
            data = out.read()
    finally:
        out_path.unlink(missing_ok=True)
    text = scrub(data[-KEEP_LOG:].decode("utf-8", "replace"), env.secrets)
    question = ""
    if question_file is not None and question_file.exists():
        question = scrub(question_file.read_text(encoding="utf-8", errors="replace").strip(), env.secrets)[:2000]
    return Run(code, time.monotonic() - start, question, text)
