"""The anchor's turn-tier notices: messages to agents' sessions, never to people.

A speculative merge that fails and a rescue match go to the sessions concerned at their next turn
(reference D-11, D-14): an ordinary ``message`` record in the anchor's ``mail`` log, addressed to those
sessions (``recipients`` as presence names them), from ``anchor/<what>``. The recipients' daemons screen and
deliver it like any message; a person hears of it only through their agent, or past their own threshold.

Live sessions are read from the presence the tick last saw (the state database's ``presence:<machine>``
cursors, kept by ``gitive/anchor/sources.py``), so finding who works on a branch costs no git read.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from gitive.anchor.base import state
from gitive.core.clock import now_ms
from gitive.core.records import MAX_MESSAGE_BODY, TEAM_SCOPE
from gitive.core.ulid import new_ulid
from gitive.team.hive import Hive

LIVE_MS = 30 * 60_000


@dataclass(frozen=True)
class Session:
    machine: str
    person: str
    name: str
    branch: str | None
    project: str | None
    files: tuple[str, ...]
    extra: dict[str, Any]

    @property
    def address(self) -> str:
        return f"{self.person}/{self.name}"


def live_sessions(st: sqlite3.Connection, index: sqlite3.Connection, now: int | None = None,
                  presence: dict[str, Any] | None = None) -> list[Session]:
    """Every live session of an active, non-anchor member, as the tick last read presence (``presence``: the
    tick's parsed copy, :attr:`gitive.anchor.base.context.Tick.presence`)."""
    now = now if now is not None else now_ms()
    people = {m: p for m, p in index.execute("SELECT machine, person FROM members WHERE active = 1 AND "
                                             "role != 'anchor'")}
    out = []
    for machine, cursor in sorted(state.presence(st, presence).items()):
        person = people.get(machine)
        if person is None or not isinstance(cursor, dict):
            continue
        for name, s in sorted((cursor.get("sessions") or {}).items()):
            if not isinstance(s, dict) or now - int(s.get("last_seen") or 0) >= LIVE_MS:
                continue
            files = tuple(str(f) for f in s.get("files") or [] if isinstance(f, str))
            out.append(Session(machine, person, name, s.get("branch") if isinstance(s.get("branch"), str) else None,
                               s.get("project") if isinstance(s.get("project"), str) else None, files, dict(s)))
    return out


def send(hive: Hive, sender: str, sessions: list[Session], body: str, at: int | None = None) -> str | None:
    """One message from ``anchor/<sender>`` to ``sessions`` (each once); its id, None when there is nobody."""
    from gitive.store import logs

    seen: dict[tuple[str, str], Session] = {}
    for s in sessions:
        seen.setdefault((s.machine, s.name), s)
    if not seen:
        return None
    targets = sorted(seen.values(), key=lambda s: (s.person, s.name))
    record = {"type": "message", "id": new_ulid(at), "from": f"anchor/{sender}",
              "to": ",".join(s.address for s in targets), "body": body.encode()[:MAX_MESSAGE_BODY].decode(
                  "utf-8", "ignore"), "from_person": False,
              "recipients": [{"machine": s.machine, "session": s.name} for s in targets]}
    logs.append(hive.store, hive.key, hive.team_id, "mail", TEAM_SCOPE, record, at=at)
    return str(record["id"])
