"""Watcher lines that are meant for a person become candidate items.

A watcher (docs/anchor.md) prints JSON lines; each is an event obligations may wait on. A line becomes a
candidate item for the gate when it is marked security (a floor), reports a failed CI state (urgency
``ci-failed``), or carries a ``title`` (the watcher says a person should see it). The line's keys:

| key | |
| --- | --- |
| ``title`` | what the person sees (cut to 140 characters) |
| ``subject`` / ``branch`` / ``job`` | what it is about: repeated lines about the same subject are one item |
| ``person`` | whose it is, when a roster person; else the code owner of ``files``; else the team's founder |
| ``files`` | paths it is about (CODEOWNERS, else recent commits, name the owner) |
| ``security`` | ``true``: a security finding (always reaches its owner) |
| ``state`` / ``status`` / ``conclusion`` | a CI state; ``failed`` and the like make it urgent |
"""

from __future__ import annotations

import sqlite3
from typing import Any

from gitive.anchor.base.context import Tick
from gitive.anchor.gate import floors, gating, items
from gitive.anchor.gate.items import Candidate
from gitive.anchor.gate.urgency import ci_failed
from gitive.team.hive import Hive


def _text(value: Any, limit: int = 200) -> str:
    return " ".join(str(value).split())[:limit] if value is not None else ""


def candidates(events: list[dict[str, Any]], index: sqlite3.Connection, hive: Hive
               ) -> list[tuple[Candidate, str | None, dict[str, Any] | None]]:
    people = items.active_people(index)
    out: list[tuple[Candidate, str | None, dict[str, Any] | None]] = []
    for e in events:
        name, data = e["watch"]["name"], e["watch"].get("data") or {}
        kind = e["event"]["action"]
        if not (floors.is_security(kind, data) or ci_failed(data) or data.get("title")):
            continue
        files = [f for f in data.get("files") or [] if isinstance(f, str)][: items.MAX_FILES] \
            if isinstance(data.get("files"), list) else []
        subject = _text(data.get("subject") or data.get("branch") or data.get("job") or kind)
        person = data.get("person") if data.get("person") in people else None
        if person is None:
            owner, _ = items.owner_of(index, _repo(hive), files, [], None)
            person = owner if owner in people else None
        if person is None:
            row = index.execute("SELECT person FROM members WHERE active = 1 AND role != 'anchor' ORDER BY ts "
                                "LIMIT 1").fetchone()
            person = row[0] if row else None
        if person is None:
            continue
        action = kind.split(".", 2)[-1]
        title = _text(data.get("title")) or f"{name}: {action} ({subject})"
        c = items.make({"kind": "watcher", "ref": name}, kind[:64], f"{name}:{subject}", person, title, e["ts"],
                       about=[{"kind": "event", "id": e["event"]["id"][:128]}], files=files)
        out.append((c, person, {**{k: v for k, v in data.items() if isinstance(v, str | int | bool)},
                                "_event": e["event"]["id"]}))
    return out


def _repo(hive: Hive) -> Any:
    try:
        return hive.project
    except Exception:  # no project repository: owners come from the line itself
        return None


class OfferWatched:
    """The tick's step before the obligations: watcher lines meant for a person offered to the gate."""

    name = "watched"

    def run(self, tick: Tick) -> None:
        found = [e for e in tick.events if e["source"]["kind"] == "watcher"]
        if found and isinstance(tick.gate, gating.Gate):
            gating.offer_all(tick.gate, candidates(found, tick.index, tick.run.hive))
