"""Urgency from checkable records only: deadlines, someone blocked, a watcher's CI state.

The inputs are records the anchor verified itself (the obligations an item is about, presence snapshots, the
events of watchers it runs). An item's title, kind and whatever its proposer claims are never read here, so an
item that says URGENT pages nobody. No model runs (DESIGN §8: the tick calls none).

| signal | from | level |
| --- | --- | --- |
| ``deadline-passed`` | an obligation it is about, open, past its deadline | attention |
| ``deadline-within-24h`` | the same, due within 24 hours | attention |
| ``owed-to`` | an open obligation it is about is owed to someone (someone waits on it) | attention |
| ``session-waiting`` | a session it names (or the obligation is owed to) waits for approval in presence | attention |
| ``ci-failed`` | the watcher event it comes from reports a failed CI state | attention |
| ``review-requested`` | a task it is about has a draft waiting for its owner's review (the anchor's own record) | attention |
| a deadline passed while someone is blocked on it (``owed-to`` or ``session-waiting``) | | alarm |

No signal: ``info``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

DAY_MS = 86_400_000
_CI_FAILED = {"failed", "failure", "error", "errored", "broken", "timed_out", "cancelled"}
_BLOCKED = {"owed-to", "session-waiting"}


@dataclass
class Facts:
    """What the anchor checked this tick: obligations by id, sessions waiting (person/session), watcher events."""

    obligations: dict[str, dict[str, Any]] = field(default_factory=dict)
    waiting: set[str] = field(default_factory=set)
    watch: dict[str, dict[str, Any]] = field(default_factory=dict)  # item id -> the watcher event's data
    prepared: set[str] = field(default_factory=set)  # tasks with a draft waiting for review (docs/prepared.md)


def ci_failed(data: dict[str, Any]) -> bool:
    """A watcher line reporting a failed CI state: ``state``, ``status`` or ``conclusion`` says so."""
    return any(str(data.get(k, "")).lower() in _CI_FAILED for k in ("state", "status", "conclusion"))


def urgency(item_id: str, about: tuple[dict[str, str], ...], facts: Facts, now: int
            ) -> tuple[str, list[dict[str, str]]]:
    """``(info | attention | alarm, the signals with the records they came from)`` for one item."""
    because: list[dict[str, str]] = []
    for a in about:
        if a["kind"] == "obligation":
            ob = facts.obligations.get(a["id"])
            if ob is None or ob.get("state", "open") != "open":
                continue
            deadline = ob.get("deadline")
            if isinstance(deadline, int):
                if deadline <= now:
                    because.append({"rule": "deadline-passed", "kind": "obligation", "id": ob["id"]})
                elif deadline - now <= DAY_MS:
                    because.append({"rule": "deadline-within-24h", "kind": "obligation", "id": ob["id"]})
            to = ob.get("to")
            if to:
                because.append({"rule": "owed-to", "kind": "obligation", "id": ob["id"]})
                if to in facts.waiting:
                    because.append({"rule": "session-waiting", "kind": "session", "id": to})
        elif a["kind"] == "session" and a["id"] in facts.waiting:
            because.append({"rule": "session-waiting", "kind": "session", "id": a["id"]})
        elif a["kind"] == "task" and a["id"] in facts.prepared:
            because.append({"rule": "review-requested", "kind": "task", "id": a["id"]})
    data = facts.watch.get(item_id)
    if data is not None and ci_failed(data):
        because.append({"rule": "ci-failed", "kind": "event", "id": str(data.get("_event", ""))[:128]})
    rules = {b["rule"] for b in because}
    if "deadline-passed" in rules and rules & _BLOCKED:
        return "alarm", because
    return ("attention" if because else "info"), because
