"""Deliveries that did not happen as they should, recorded with their reason, and counted for ``gitive
status`` (stdlib only: hooks record them).

A hook never blocks an agent, so sometimes it cannot carry what it should: the session's state was locked by
a stopped hook, the index was locked or slow, the daemon had not ranked the prompt in time, the reply had no
room left, the reply could not be written, or a hook died holding an item. Each is one event in the log,
``delivery.missed`` (the item, if any, stays queued and goes at a later call), ``delivery.deferred`` (queued
items left for the next call, for room) or ``delivery.reclaimed`` (items a dead hook held, back in the queue),
with ``delivery.reason`` in words a person can act on. They are appended after the reply is written, so
recording them never delays it.
"""

from __future__ import annotations

import time

# typing costs each hook process about 5 ms to import; with postponed annotations it is needed only by checkers
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


MISSED, DEFERRED, RECLAIMED = "delivery.missed", "delivery.deferred", "delivery.reclaimed"
INJECTED = ("team.lesson.injected", "team.message.injected")
DAY_MS = 86_400_000


class Book:
    """What went wrong in one hook call, written to the log once the reply is out."""

    __slots__ = ("cwd", "entries", "harness", "hook", "session")

    def __init__(self, harness: str, session: str | None, cwd: str | None, hook: str) -> None:
        self.harness, self.session, self.cwd, self.hook = harness, session, cwd, hook
        self.entries: list[tuple[str, dict[str, Any]]] = []

    def miss(self, reason: str, what: str, **extra: Any) -> None:
        self.entries.append((MISSED, {"reason": reason, "what": what, **extra}))

    def deferred(self, count: int, room: int) -> None:
        if count:
            self.entries.append((DEFERRED, {"reason": "no-room", "what": f"{count} queued item(s) did not fit "
                                            f"the {room} bytes left in this reply; they go first next call",
                                            "items": count}))

    def reclaimed(self, taken: list[tuple[str, int]]) -> None:
        for name, pid in taken:
            self.entries.append((RECLAIMED, {"reason": "hook-died", "what": f"hook pid {pid} died holding "
                                             f"{name}; queued again at once", "items": 1}))

    def flush(self) -> None:
        if not self.entries:
            return
        from gitive.capture import events

        for action, delivery in self.entries:
            try:
                events.append(events.make(action, harness=self.harness, session=self.session, cwd=self.cwd,
                                          delivery={"hook": self.hook, **delivery}))
            except OSError:
                return
        self.entries = []


def summary(since_ms: int | None = None) -> dict[str, Any]:
    """Counts over the event log since ``since_ms`` (default: the last 24 hours): delivered lessons and
    messages, and each kind of miss by reason, with the latest reason's words."""
    from gitive.capture import events

    since = since_ms if since_ms is not None else time.time_ns() // 1_000_000 - DAY_MS
    out: dict[str, Any] = {"since": since, "delivered": {"lessons": 0, "messages": 0}, "missed": {},
                           "deferred": 0, "reclaimed": 0, "latest": {}}
    for event in events.read(since_ms=since, actions=(*INJECTED, MISSED, DEFERRED, RECLAIMED)):
        action = event["event"].get("action")
        delivery = event.get("delivery") or {}
        if action == "team.lesson.injected":
            out["delivered"]["lessons"] += 1
        elif action == "team.message.injected":
            out["delivered"]["messages"] += 1
        elif action == MISSED:
            reason = str(delivery.get("reason") or "unknown")
            out["missed"][reason] = out["missed"].get(reason, 0) + 1
            out["latest"][reason] = str(delivery.get("what") or "")
        elif action == DEFERRED:
            out["deferred"] += int(delivery.get("items") or 1)
        else:
            out["reclaimed"] += int(delivery.get("items") or 1)
    return out


def lines(found: dict[str, Any]) -> list[str]:
    """``gitive status``'s words for :func:`summary`."""
    got = found["delivered"]
    out = [f"delivered in the last 24 h: {got['lessons']} lesson(s), {got['messages']} message(s)"]
    missed = found["missed"]
    if not missed and not found["deferred"] and not found["reclaimed"]:
        return [*out, "nothing missed"]
    for reason, count in sorted(missed.items(), key=lambda kv: -kv[1]):
        out.append(f"missed {count}x ({reason}): {found['latest'].get(reason, '')}")
    if found["deferred"]:
        out.append(f"deferred {found['deferred']} item(s) to a later call for room (then sent first)")
    if found["reclaimed"]:
        out.append(f"took back {found['reclaimed']} item(s) from hooks that died holding them (sent again)")
    return out
