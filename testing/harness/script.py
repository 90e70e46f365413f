"""What the scripted model answers: a list of steps, chosen by how far the conversation has got.

A harness sends more than its agent loop to the model: titles, summaries, token counts, warm-ups. So the reply
is not picked by a request counter (which those side requests would move) but from the conversation itself:
step ``n`` answers a request of the agent loop that already holds ``n`` tool results (every tool call in the
conversation is the script's). A request that offers no tools (a title, a summary) gets :data:`SIDE_REPLY`.

A step may carry ``before``: something the test does while the model "thinks", before the reply goes out
(a teammate sends a message during the turn, say). It runs once, however often the step is asked for.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

SIDE_REPLY = "ok"


@dataclass(frozen=True)
class Text:
    """A final answer: the turn ends."""

    text: str
    before: Callable[[], None] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Call:
    """A tool call by the model. ``name`` is the tool's name as the harness offers it (``Edit``,
    ``mcp__gitive__search_memory``, ``apply_patch``, ``replace``); ``args`` its input, a string for a
    freeform tool (Codex's ``apply_patch``)."""

    name: str
    args: dict[str, Any] | str = field(default_factory=dict)
    before: Callable[[], None] | None = field(default=None, compare=False)


Step = Text | Call


@dataclass
class Script:
    """The steps of one conversation, in order; past the last one the model repeats its last answer."""

    steps: list[Step]
    errors: list[str] = field(default_factory=list)  # what a ``before`` raised (the test reports it)
    _fired: set[int] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def step(self, done: int) -> Step:
        """The step for a request that already holds ``done`` tool results (its ``before`` run first)."""
        if not self.steps:
            return Text(SIDE_REPLY)
        index = min(done, len(self.steps) - 1)
        chosen = self.steps[index]
        with self._lock:
            first = index not in self._fired
            self._fired.add(index)
            if first and chosen.before is not None:
                try:
                    chosen.before()
                except Exception as exc:  # reported by the test, never lost in a server thread
                    self.errors.append(f"step {index}: {type(exc).__name__}: {exc}")
        return chosen

    @staticmethod
    def call_id(done: int) -> str:
        """The id of the call made at step ``done`` (the harness echoes it in the tool's result)."""
        return f"call_gitive_{done:02d}"


def say(text: str) -> Script:
    """A script that answers ``text`` at once."""
    return Script([Text(text)])
