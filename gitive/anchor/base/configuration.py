"""The anchor's configuration as values (:class:`Config`, :class:`Watcher`), and what every part of
``anchor.yaml`` is parsed with: the error a bad value raises, and command lines.

The runtime's ``gitive.anchor.config`` reads the file and hands each section to its room
(``prepared.workers``, ``prepared.settings``), which parse it with these.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitive.errors import GitiveError

DEFAULT_INTERVAL = 30.0
DEFAULT_TIMEOUT = 10.0


class ConfigError(GitiveError):
    """A value in ``anchor.yaml`` is wrong; the message names the file, the key and what is allowed."""


def command_words(where: str, command: Any) -> tuple[str, ...]:
    """A command from the config: a list of words, or a string split as a shell would (run without one).

    Raises:
        ConfigError: neither, or empty.
    """
    try:
        words = shlex.split(command) if isinstance(command, str) else command
    except ValueError as exc:
        raise ConfigError(f"{where} cannot be split into words: {exc}") from None
    if not isinstance(words, list) or not words or not all(isinstance(w, str) and w for w in words):
        raise ConfigError(f"{where} must be a non-empty list of words, or a string")
    return tuple(words)


@dataclass(frozen=True)
class Watcher:
    name: str
    command: tuple[str, ...]
    every: float = 0.0
    timeout: float = DEFAULT_TIMEOUT


@dataclass(frozen=True)
class Config:
    interval: float = DEFAULT_INTERVAL
    watchers: tuple[Watcher, ...] = field(default_factory=tuple)
    path: Path | None = None
    workers: dict[str, Any] = field(default_factory=dict)  # name -> gitive.anchor.prepared.workers.Worker
    prepared: Any = None  # gitive.anchor.prepared.settings.Prepared (None: the defaults)

    @property
    def watcher_names(self) -> set[str]:
        return {w.name for w in self.watchers}
