"""The ``prepared:`` section of ``anchor.yaml``: how the anchor handles tasks, drafts and approvals.

```yaml
prepared:
  worker: fix-test            # the worker of tasks that name none
  remote: origin              # where drafts are pushed and approved changes land (default: the first remote)
  action: land                # after an approval: land (fast-forward the target) or propose
  propose: ["gh", "pr", "create", "--head", "{branch}", "--base", "{target}", "--title", "{title}",
            "--body", "{body}"]
  protected: ["release/*"]    # branches never landed on (Outside): propose there instead
  outside: ["deploy/**"]      # more paths the anchor never changes, beside CI, settings and CODEOWNERS
  test_commands: ["pytest", "python -m pytest", "npm test"]   # test commands a task may name (first words)
  parallel: 1                 # tasks worked on at once
  read: ["/opt/venvs/app"]    # read-only paths the sandbox shows test commands and checks, beside the system
  merges:                     # speculative merges of pushed branches that touch a common file
    test: "pytest -q"         # the test command run on each branch and on their merge ("" turns them off)
    every: 300                # seconds between passes
    branches: ["*"]           # which branches take part (globs; hive/* are the anchor's own and never do)
  standing:
    threshold: 5              # approvals as prepared (none edited or reverted) before the anchor proposes one
```
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitive.anchor.base.configuration import ConfigError, command_words
from gitive.core.ids import is_name

DEFAULT_TESTS = ("pytest", "python -m pytest", "python3 -m pytest", "npm test", "npm run test", "yarn test",
                 "pnpm test", "go test", "cargo test", "make test", "make check", "tox", "nox")
_KEYS = {"worker", "remote", "action", "propose", "protected", "outside", "test_commands", "parallel", "merges",
         "standing", "read"}


@dataclass(frozen=True)
class Merges:
    test: str = ""
    every: float = 300.0
    branches: tuple[str, ...] = ("*",)


@dataclass(frozen=True)
class Prepared:
    worker: str = ""
    remote: str = ""
    action: str = "land"
    propose: tuple[str, ...] = ()
    protected: tuple[str, ...] = ()
    outside: tuple[str, ...] = ()
    test_commands: tuple[str, ...] = DEFAULT_TESTS
    parallel: int = 1
    merges: Merges = field(default_factory=Merges)
    threshold: int = 5
    read: tuple[str, ...] = ()

    def allows_test(self, command: str) -> bool:
        """Whether a task's test command starts with one of the allowed commands (word by word)."""
        try:
            words = shlex.split(command)
        except ValueError:
            return False
        return any(words[:len(p.split())] == p.split() for p in self.test_commands)


def _strings(where: str, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConfigError(f"{where} must be a list of strings")
    return tuple(value)


def _merges(path: Path, data: Any) -> Merges:
    if data is None:
        return Merges()
    if not isinstance(data, dict) or set(data) - {"test", "every", "branches"}:
        raise ConfigError(f"{path}: `prepared.merges` takes test, every and branches")
    every = data.get("every", 300)
    if isinstance(every, bool) or not isinstance(every, int | float) or every < 1:
        raise ConfigError(f"{path}: `prepared.merges.every` must be a number of seconds, at least 1")
    test = data.get("test", "")
    if not isinstance(test, str):
        raise ConfigError(f"{path}: `prepared.merges.test` must be a command string")
    return Merges(test, float(every), _strings(f"{path}: `prepared.merges.branches`", data.get("branches", ["*"])))


def parse(path: Path, data: Any) -> Prepared:
    """The ``prepared:`` section.

    Raises:
        ConfigError: an unknown key or a bad value (the message says which).
    """
    if data is None:
        return Prepared()
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: `prepared` must be a mapping")
    unknown = set(data) - _KEYS
    if unknown:
        raise ConfigError(f"{path}: `prepared` has unknown keys {', '.join(sorted(map(str, unknown)))}; known: "
                          f"{', '.join(sorted(_KEYS))}")
    worker = data.get("worker", "")
    if worker and not is_name(worker):
        raise ConfigError(f"{path}: `prepared.worker` must name a worker")
    action = data.get("action", "land")
    if action not in ("land", "propose"):
        raise ConfigError(f"{path}: `prepared.action` is land or propose")
    propose = command_words(f"{path}: `prepared.propose`", data["propose"]) if "propose" in data else ()
    if action == "propose" and not propose:
        raise ConfigError(f"{path}: `prepared.action: propose` needs a `prepared.propose` command")
    parallel = data.get("parallel", 1)
    if isinstance(parallel, bool) or not isinstance(parallel, int) or not 1 <= parallel <= 16:
        raise ConfigError(f"{path}: `prepared.parallel` must be 1 to 16")
    standing = data.get("standing") or {}
    threshold = standing.get("threshold", 5) if isinstance(standing, dict) else None
    if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 1:
        raise ConfigError(f"{path}: `prepared.standing.threshold` must be a whole number, at least 1")
    remote = data.get("remote", "")
    if not isinstance(remote, str):
        raise ConfigError(f"{path}: `prepared.remote` must name a remote")
    return Prepared(worker, remote, action, propose,
                    _strings(f"{path}: `prepared.protected`", data.get("protected", [])),
                    _strings(f"{path}: `prepared.outside`", data.get("outside", [])),
                    _strings(f"{path}: `prepared.test_commands`", data.get("test_commands", list(DEFAULT_TESTS))),
                    parallel, _merges(path, data.get("merges")), threshold, _paths(path, data.get("read", [])))


def _paths(path: Path, value: Any) -> tuple[str, ...]:
    found = _strings(f"{path}: `prepared.read`", value)
    if not all(p.startswith("/") for p in found):
        raise ConfigError(f"{path}: `prepared.read` must be a list of absolute paths")
    return found
