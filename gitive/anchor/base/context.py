"""What a tick hands its steps, and the one protocol every step keeps.

The tick (``gitive.anchor.tick``) drives the rooms; the rooms never import it. A step sees the anchor's run
through :class:`Run` (the tick's ``Anchor`` implements it), the gate through :class:`Gate`, and writes what it
did into the :class:`TickReport`.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from gitive.anchor.base.configuration import Config

if TYPE_CHECKING:
    from gitive.store.types import Repo
    from gitive.team.hive import Hive


@dataclass
class TickReport:
    at: int
    idle: bool = True
    fetched: list[str] = field(default_factory=list)
    unreachable: dict[str, str] = field(default_factory=dict)
    received: int = 0
    events: dict[str, int] = field(default_factory=dict)
    evaluations: int = 0
    fired: list[dict[str, Any]] = field(default_factory=list)
    verdicts: list[dict[str, str]] = field(default_factory=list)
    problems: dict[str, str] = field(default_factory=dict)
    pushed: int = 0
    gate: dict[str, Any] = field(default_factory=dict)  # the gate's decisions this tick, by branch
    prepared: list[dict[str, str]] = field(default_factory=list)  # prepared-work records written (docs/prepared.md)
    merges: dict[str, int] = field(default_factory=dict)  # a speculative-merge pass that did something
    rescued: int = 0  # rescue messages sent to stuck sessions
    ms: int = 0

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class Gate(Protocol):
    """Where candidate items go. The gate decides whether and when a person sees one; the tick does not."""

    def offer(self, item: Any) -> bool:
        """Take ``item``; true if it was new."""
        ...


class Run(Protocol):
    """One anchor run as a step sees it: the hive it serves, its config, and what it keeps between ticks."""

    hive: Hive
    config: Config
    started: int
    inline: bool  # prepared work runs inside the tick (`gitive anchor run --once`), not on threads
    prepared_work: Any  # gitive.anchor.prepared.work.Work, made at the first tick that has a task
    unpushed: bool  # this machine's refs may be ahead of the remote: push at the next tick

    @property
    def state_path(self) -> Path: ...

    def watching(self) -> list[tuple[Repo, str, str]]:
        """(project store, remote, repository label) for each remote whose branches the anchor watches."""
        ...


@dataclass
class Tick:
    """One tick, as each step after the obligations sees it."""

    run: Run
    index: sqlite3.Connection
    state: sqlite3.Connection
    gate: Gate
    now: int
    report: TickReport
    events: list[dict[str, Any]] = field(default_factory=list)  # this tick's new events, in time order
    counts: dict[str, int] = field(default_factory=dict)  # new events per source kind
    changed: bool = True  # anything new since the gate last ran (entries, events, firings), or its first run
    # machine -> its presence cursor as this tick saved it (state's ``presence:<machine>``), read once a tick
    presence: dict[str, Any] | None = None


class Step(Protocol):
    """A part of the tick that runs after the obligations are evaluated; problems are reported, never raised."""

    name: str

    def run(self, tick: Tick) -> None: ...
