"""Rescue: a session stuck on a failure is pointed at what the team already knows about it.

Members' daemons publish only hashes (``stuck`` per session, ``resolved`` per machine; gitive/daemon/stuck.py).
Each tick the anchor matches every live session's stuck signatures against, in this order:

1. verified lessons carrying the signature (tag ``signature:<hash>``, as the quiet pass drafts them);
2. a teammate's session that resolved the same signature in the last 24 hours;
3. a live session of someone else touching the same files as the stuck session.

A session that went 8 turns without changing a file (a signature starting ``turns``, which no lesson or teammate
can carry) is matched instead against the verified lessons about the files it keeps touching (recall's own
file ranking), then step 3.

A match goes to the stuck session only, as a turn-tier message from ``anchor/rescue`` naming the pointer (a
lesson id, a session address): never to the person, and to nobody else (reference D-14). Each pointer is sent
to a session once.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from gitive.anchor.base import mail, state
from gitive.anchor.base.context import Run, Tick, TickReport

TAG = "signature:"
TURNS = "turns"  # gitive.daemon.stuck.TURNS_PREFIX (the anchor does not import the daemon)


def _lessons(index: sqlite3.Connection, signature: str) -> list[str]:
    """Verified lessons whose tags carry ``signature``, newest first."""
    from gitive.lessons import catalog

    found = []
    for lesson, tags in index.execute("SELECT id, tags FROM visible_lessons WHERE tags LIKE ? ORDER BY at DESC",
                                      (f"%{TAG}{signature}%",)):
        if f"{TAG}{signature}" in json.loads(tags) and catalog.get(index, lesson)["state"] == "verified":
            found.append(lesson)
    return found


def _pointer(index: sqlite3.Connection, st: sqlite3.Connection, stuck: mail.Session, signature: str,
             sessions: list[mail.Session], now: int, presence: dict[str, Any] | None = None
             ) -> tuple[str, str] | None:
    """(pointer key, the message) for the first match, or None."""
    from gitive.lessons import catalog

    if signature.startswith(TURNS):
        return _about_files(index, stuck) or _someone_on(stuck, sessions)
    for lesson in _lessons(index, signature):
        text = (catalog.get(index, lesson).get("text") or "")[:600]
        return f"lesson:{lesson}", (f"A verified team lesson matches the failure this session keeps hitting: "
                                    f"lesson {lesson[:12]} (`gitive lessons show {lesson[:12]}`): {text}")
    for machine, cursor in state.presence(st, presence).items():
        if machine == stuck.machine or not isinstance(cursor, dict):
            continue
        for r in cursor.get("resolved") or []:
            if isinstance(r, dict) and r.get("signature") == signature and int(r.get("until") or 0) > now:
                who = next((s.person for s in sessions if s.machine == machine), None)
                person = who or _person(index, machine)
                return f"resolved:{machine}", (f"{person} got past this same failure in the last 24 hours: ask "
                                               f"them (`gitive send {person}/* …`) before trying again.")
    return _someone_on(stuck, sessions)


def _someone_on(stuck: mail.Session, sessions: list[mail.Session]) -> tuple[str, str] | None:
    mine = set(stuck.files)
    for other in sessions:
        if other.person != stuck.person and mine & set(other.files):
            shared = sorted(mine & set(other.files))[:5]
            return f"session:{other.machine}/{other.name}", (
                f"{other.address} is working on {', '.join(shared)} right now: they may know why this keeps "
                "failing (`gitive send` to ask).")
    return None


def _about_files(index: sqlite3.Connection, stuck: mail.Session) -> tuple[str, str] | None:
    """A verified lesson about the files a session has read for 8 turns without changing one, or None."""
    from gitive.lessons import recall

    if not stuck.files:
        return None
    found = recall.search(index, "", files=list(stuck.files)[-8:], limit=1, semantic=None)
    if not found or not found[0].get("verified"):
        return None
    lesson = found[0]
    return f"lesson:{lesson['id']}", (
        f"This session has gone 8 turns without changing a file. A verified team lesson is about the files it "
        f"keeps reading: lesson {lesson['id'][:12]} (`gitive lessons show {lesson['id'][:12]}`): "
        f"{(lesson.get('text') or '')[:600]}")


def _person(index: sqlite3.Connection, machine: str) -> str:
    row = index.execute("SELECT person FROM members WHERE machine = ?", (machine,)).fetchone()
    return row[0] if row else machine[:12]


def step(anchor: Run, st: sqlite3.Connection, index: sqlite3.Connection, now: int, report: TickReport,
         presence: dict[str, Any] | None = None) -> int:
    """Tell each stuck session what matches its signatures (once per pointer); how many messages were sent.
    ``presence``: the tick's parsed presence cursors, when it has them."""
    presence = state.presence(st, presence)
    sessions = mail.live_sessions(st, index, now, presence)
    sent = 0
    for s in sessions:
        for signature in s.extra.get("stuck") or []:
            if not isinstance(signature, str) or not signature.isalnum():
                continue
            found = _pointer(index, st, s, signature, sessions, now, presence)
            if found is None:
                continue
            key = f"rescue:{s.machine}/{s.name}/{signature}/{found[0]}"
            if state.get(st, key) is not None:
                continue
            if mail.send(anchor.hive, "rescue", [s], found[1], at=now):
                state.put(st, key, now, now)
                sent += 1
                anchor.unpushed = True
    if sent:
        report.rescued = sent
    return sent


class Rescue:
    """The tick's step: stuck sessions pointed at what the team already knows."""

    name = "rescue"

    def run(self, tick: Tick) -> None:
        step(tick.run, tick.state, tick.index, tick.now, tick.report, tick.presence)
