"""Counting deliveries honestly, for benchmarks and tests: each item that was due was delivered, missed with
a recorded reason, or missed silently (the one outcome issue 18 forbids).

What was due is decided outside the product (from the index's own tables, or because the test queued it),
what was delivered from the hook's real reply, and what was recorded from the real event log under the hook's
``GITIVE_HOME`` (``delivery.missed`` / ``delivery.deferred`` events of that session). An item nothing called for
is counted apart, so a round with nothing due is never mistaken for a miss.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RECORDED = ("delivery.missed", "delivery.deferred")

# Files a verified lesson cites: the ones an Edit must bring a lesson for (the hook injects only verified ones).
_CITED_VERIFIED = ("SELECT DISTINCT p.path FROM lesson_files f JOIN paths p ON p.id = f.path JOIN lessons l "
                   "ON l.rowid = f.lesson JOIN lesson_status s ON s.lesson = l.id WHERE s.state = 'verified'")


def cited_by_verified(index: Path) -> set[str]:
    """Repository paths some verified lesson cites, read from the index file itself (read-only)."""
    conn = sqlite3.connect(f"file:{index}?mode=ro", uri=True)
    try:
        return {row[0] for row in conn.execute(_CITED_VERIFIED)}
    finally:
        conn.close()


def recorded(home: Path, session: str) -> list[dict[str, Any]]:
    """The misses the hooks recorded for ``session`` (its harness's raw id) in ``home``'s event log."""
    out = []
    for path in sorted((home / "events").glob("*.jsonl")):
        for raw in path.read_bytes().splitlines():
            try:
                event = json.loads(raw)
            except ValueError:
                continue
            action = (event.get("event") or {}).get("action")
            where = str((event.get("session") or {}).get("id") or "")
            if action in RECORDED and where and (where == session or where.endswith(session)):
                out.append({"action": action, **(event.get("delivery") or {})})
    return out


@dataclass
class Tally:
    """One kind of item over many rounds."""

    name: str
    delivered: int = 0
    recorded: int = 0  # missed, with a reason in the event log
    late: int = 0  # of the recorded misses: delivered by a later call within the bound
    silent: int = 0  # due, not delivered, nothing recorded
    not_due: int = 0
    unexpected: int = 0  # delivered though nothing called for it
    silent_rounds: list[str] = field(default_factory=list)
    reasons: dict[str, int] = field(default_factory=dict)

    def add(self, label: str, due: bool, delivered: bool, misses: list[dict[str, Any]]) -> None:
        if not due:
            self.not_due += 1
            self.unexpected += delivered
        elif delivered:
            self.delivered += 1
        elif misses:
            self.recorded += 1
            for miss in misses:
                reason = str(miss.get("reason") or "unknown")
                self.reasons[reason] = self.reasons.get(reason, 0) + 1
        else:
            self.silent += 1
            self.silent_rounds.append(label)

    @property
    def due(self) -> int:
        return self.delivered + self.recorded + self.silent

    @property
    def ok(self) -> bool:
        """No silent miss, nothing delivered that was not due, and every recorded miss made good in time."""
        return not self.silent and not self.unexpected and self.late == self.recorded

    def line(self) -> str:
        why = ", ".join(f"{r} {n}" for r, n in sorted(self.reasons.items())) or "none"
        text = (f"{self.name}: due in {self.due}: delivered {self.delivered}, recorded miss {self.recorded} "
                f"(reasons: {why}; delivered by a later call within 2: {self.late}), silent {self.silent}")
        if self.not_due:
            text += f"; nothing due in {self.not_due} (delivered anyway: {self.unexpected})"
        if self.silent_rounds:
            text += f"; SILENT in {', '.join(self.silent_rounds[:10])}"
        return text
