"""New events since the anchor's cursor, per source: verified log entries, watched refs, presence, the clock.

Each source compares what it has with its cursor first and reads nothing more when they agree, so a tick
with nothing new costs one comparison per log (plus one per watched remote and presence ref). A cursor moves
only after the tick that read past it has written its firings (:mod:`gitive.anchor.tick`).

Logs replay from the start the first time (their history is there to read); watched refs and presence have
no history, so the first sight of one is its baseline and yields no events.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gitive.anchor.base import state
from gitive.anchor.obligations import events
from gitive.constants import PRESENCE_REF_PREFIX, REMOTES_REF_PREFIX
from gitive.core import canonical
from gitive.index import queries
from gitive.store import objects, refs, snapshots, watch

if TYPE_CHECKING:
    from gitive.store.types import Repo

LIVE_MS = 30 * 60_000  # as the daemon's presence: a session unseen for 30 minutes has ended
PRESENCE_FILE = "presence.json"
DAY_MS = 86_400_000


@dataclass
class Batch:
    """Events read this tick, and the cursor values to save once they are handled."""

    events: list[dict[str, Any]] = field(default_factory=list)
    cursors: dict[str, Any] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    # event id -> the start of the interval it happened in, when only that is known (a ref moved between two
    # fetches): an event from before this run started is late even if its estimated time is not
    since: dict[str, int] = field(default_factory=dict)

    def add(self, source: str, found: list[dict[str, Any]]) -> None:
        self.events += found
        if found:
            self.counts[source] = self.counts.get(source, 0) + len(found)


def _roles(index: sqlite3.Connection) -> dict[str, str]:
    return dict(index.execute("SELECT machine, role FROM members").fetchall())


def logs(index: sqlite3.Connection, st: sqlite3.Connection, batch: Batch,
         parsed: dict[str, tuple[str, Any]] | None = None) -> None:
    """Verified entries past each log's cursor (one comparison per log when nothing is new; ``parsed``: the
    cursors as last parsed, :func:`state.get_prefix`)."""
    seen = state.get_prefix(st, "log:", parsed)
    moved = [(a, log_, hwm) for a, log_, hwm in index.execute("SELECT author, log, hwm FROM logs")
             if hwm > seen.get(f"{a}/{log_}", 0)]
    if not moved:
        return
    roles = _roles(index)
    found = []
    for author, log_, hwm in moved:
        for entry in queries.verified_entries(index, author=author, log=log_, after_seq=seen.get(f"{author}/{log_}", 0),
                                              limit=1 << 40):
            found.append(events.from_entry(entry, roles.get(author)))
        batch.cursors[f"log:{author}/{log_}"] = hwm
    batch.add("log", found)


def _clamp(at: int | None, low: int, high: int) -> int:
    """A movement happened between the last fetch and this one: its commit time, kept inside that interval."""
    return min(max(at if at is not None else high, low), high)


def watched(repo: Repo, remote: str, repository: str, st: sqlite3.Connection, batch: Batch,
            now: int, snapshot: dict[str, str] | None = None) -> None:
    """Ref movements of one watched remote since the last tick (baseline on first sight)."""
    key = f"ref:{remote}"
    cursor = state.get(st, key)
    current = watch.tips(repo, remote, snapshot)
    if cursor is not None and cursor["tips"] == current:
        return
    batch.cursors[key] = {"tips": current, "at": now}
    if cursor is None:
        return
    found = [events.from_movement(m, remote, repository, _clamp(m.at, cursor["at"], now), i)
             for i, m in enumerate(watch.movements(repo, cursor["tips"], current))]
    batch.since.update((e["event"]["id"], cursor["at"]) for e in found)
    batch.add("ref", found)


def _snapshot(repo: Repo, team_id: str, machine: str, tip: str) -> dict[str, Any] | None:
    if not snapshots.signature_ok(repo, team_id, "presence", machine, tip):
        return None
    try:
        snap = canonical.loads(objects.file_at(repo, PRESENCE_FILE, tip).data)
    except Exception:  # a peer's malformed snapshot is skipped, never a crash
        return None
    return snap if isinstance(snap, dict) and snap.get("machine") == machine else None


def _presence_refs(stores: list[Repo], snapshots: dict[str, dict[str, str]]
                   ) -> dict[str, tuple[Repo, str]]:
    """machine -> (store, tip) of the newest presence snapshot any store holds for it."""
    found: dict[str, list[tuple[Repo, str]]] = {}
    for repo in stores:
        listed = snapshots.get(repo.path)
        for name, tip in (listed if listed is not None else refs.tips(repo, "refs/hive")).items():
            if name.startswith(PRESENCE_REF_PREFIX) or (name.startswith(REMOTES_REF_PREFIX) and "/presence/" in name):
                copies = found.setdefault(name.rsplit("/", 1)[-1], [])
                if all(t != tip for _, t in copies):
                    copies.append((repo, tip))
    # Several copies (this machine's own, several remotes): the newest snapshot wins.
    return {m: max(c, key=lambda rt: watch.commit_time(rt[0], rt[1]) or 0) if len(c) > 1 else c[0]
            for m, c in found.items()}


def _live(sessions: Any, now: int) -> dict[str, dict[str, Any]]:
    out = {}
    for s in sessions if isinstance(sessions, list) else []:
        if isinstance(s, dict) and isinstance(s.get("name"), str) and isinstance(s.get("last_seen"), int) \
                and now - s["last_seen"] < LIVE_MS:
            out[s["name"]] = s
    return out


def presence(stores: list[Repo], team_id: str, members: dict[str, tuple[str, bool]],
             st: sqlite3.Connection, batch: Batch, now: int, snapshots: dict[str, dict[str, str]] | None = None,
             seen: dict[str, Any] | None = None) -> None:
    """session.started / ended / idle from members' presence snapshots (and sessions going stale).

    The first scan is the baseline; after it, a machine publishing presence for the first time is news.
    ``seen`` is the presence cursors (:func:`state.presence`) when the caller has read them.
    """
    seen = state.presence(st, seen)
    first = state.get(st, "presence-baseline") is None
    batch.cursors["presence-baseline"] = True
    for machine, (repo, tip) in sorted(_presence_refs(stores, snapshots or {}).items()):
        person, active = members.get(machine, ("", False))
        cursor = seen.get(machine)
        if not active:
            continue
        sessions = cursor["sessions"] if cursor else {}
        before = (cursor.get("resolved") if cursor else None) or []
        if cursor is None or cursor["tip"] != tip:
            snap = _snapshot(repo, team_id, machine, tip)
            if snap is None:
                continue
            fresh = {name: {k: s.get(k) for k in ("name", "harness", "project", "branch", "files", "turn",
                                                   "started", "last_seen", "open_steps", "stuck")}
                     for name, s in _live(snap.get("sessions"), now).items()}
            resolved = snap.get("resolved") if isinstance(snap.get("resolved"), list) else []
        else:
            fresh = {name: s for name, s in sessions.items() if now - int(s.get("last_seen") or 0) < LIVE_MS}
            resolved = before
        if cursor is not None and fresh == sessions and resolved == before:
            continue
        batch.cursors[f"{state.PRESENCE}{machine}"] = {"tip": tip, "sessions": fresh, "resolved": resolved}
        if first:
            continue
        batch.add("presence", _session_events(machine, person, sessions, fresh, now))


def _session_events(machine: str, person: str, old: dict[str, Any], new: dict[str, Any], now: int
                    ) -> list[dict[str, Any]]:
    found = []
    for i, name in enumerate(sorted(set(old) | set(new))):
        before, after = old.get(name), new.get(name)
        if before is None and after is not None:
            found.append(events.from_session("session.started", machine, person, after,
                                             int(after.get("started") or now), i))
        elif after is None and before is not None:
            ended = min(now, int(before.get("last_seen") or now) + LIVE_MS)
            found.append(events.from_session("session.ended", machine, person, before, ended, i))
        elif before and after and after.get("turn") == "idle" and before.get("turn") != "idle":
            found.append(events.from_session("session.idle", machine, person, after,
                                             int(after.get("last_seen") or now), i))
    return found


def clock(st: sqlite3.Connection, batch: Batch, now: int, obligations: list[dict[str, Any]]) -> None:
    """clock.day for each UTC day begun since the last tick; obligation.due and .lapsed as their times pass."""
    last = state.get(st, "clock")
    batch.cursors["clock"] = now
    if last is None or now <= last:
        return
    found = []
    start = (last // DAY_MS + 1) * DAY_MS
    for midnight in range(start, now + 1, DAY_MS):
        found.append(events.day(midnight))
        if len(found) > 366:
            break
    for ob in obligations:
        if ob["deadline"] is not None and last < ob["deadline"] <= now:
            found.append(events.obligation_clock("obligation.due", ob, ob["deadline"]))
        if last < ob["expires"] <= now:
            found.append(events.obligation_clock("obligation.lapsed", ob, ob["expires"]))
    batch.add("clock", found)

