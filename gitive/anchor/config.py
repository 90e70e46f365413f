"""The anchor's configuration: ``$GITIVE_HOME/anchor.yaml`` on the anchor machine (docs/anchor.md).

```yaml
interval: 30            # seconds between ticks (default 30)
watchers:               # commands whose JSON lines become events (watch.<name>.<action>)
  ci:
    command: ["python3", "tools/ci_poll.py"]   # a list (no shell), or a string split like a shell would
    every: 60           # seconds between runs (default: every tick)
    timeout: 10         # seconds before the command is killed (default 10)
```

Watcher commands run on the anchor machine with its user's rights, so they are configured there, by whoever
runs the anchor, and never read from the shared repository, which anyone who can push could change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gitive.anchor.base.configuration import (
    DEFAULT_INTERVAL,
    DEFAULT_TIMEOUT,
    Config,
    ConfigError,
    Watcher,
    command_words,
)
from gitive.anchor.prepared import settings, workers
from gitive.core.home import gitive_home
from gitive.core.ids import is_name

FILE = "anchor.yaml"
_KNOWN = {"interval", "watchers", "workers", "prepared"}  # workers, prepared: gitive/anchor/workers.py, settings.py
_WATCHER_KEYS = {"command", "every", "timeout"}


def _number(where: str, value: Any, low: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < low:
        raise ConfigError(f"{where} must be a number of seconds, at least {low:g}")
    return float(value)


def _watcher(path: Path, name: Any, spec: Any) -> Watcher:
    where = f"{path}: watcher {name!r}"
    if not is_name(name):
        raise ConfigError(f"{path}: watcher name {name!r} is not allowed: use 1-64 of a-z, 0-9 and -")
    if not isinstance(spec, dict) or "command" not in spec:
        raise ConfigError(f"{where} needs a `command` (a list of words, or a string)")
    unknown = set(spec) - _WATCHER_KEYS
    if unknown:
        raise ConfigError(f"{where} has unknown keys {', '.join(sorted(unknown))}; known: command, every, timeout")
    words = command_words(f"{where}: `command`", spec["command"])
    return Watcher(name, words, _number(f"{where}: `every`", spec.get("every", 0), 0),
                   _number(f"{where}: `timeout`", spec.get("timeout", DEFAULT_TIMEOUT), 0.1))


def load(path: Path | None = None) -> Config:
    """Read the anchor's config; defaults when the file does not exist.

    Raises:
        ConfigError: the file is not valid YAML, or a value is wrong (the message names it).
    """
    import yaml

    path = path or gitive_home() / FILE
    if not path.exists():
        return Config()
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path} is not valid YAML: {' '.join(str(exc).split())[:200]}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must be a mapping (interval:, watchers:)")
    unknown = set(data) - _KNOWN
    if unknown:
        raise ConfigError(f"{path} has unknown keys {', '.join(sorted(map(str, unknown)))}; known: "
                          f"{', '.join(sorted(_KNOWN))}")
    watchers = data.get("watchers") or {}
    if not isinstance(watchers, dict):
        raise ConfigError(f"{path}: `watchers` must map a name to its command")
    return Config(_number(f"{path}: `interval`", data.get("interval", DEFAULT_INTERVAL), 1),
                  tuple(_watcher(path, name, spec) for name, spec in watchers.items()), path,
                  workers.parse(path, data.get("workers")), settings.parse(path, data.get("prepared")))
