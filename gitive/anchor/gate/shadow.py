"""Shadow mode's record: how well the gate would have done for a person, measured in both directions.

- **acted-on rate** of what was (or in shadow would have been) delivered: the share the person marked wanted
  (``gitive digest mark ITEM wanted``) or acted on (the obligation it is about was done, cancelled or renewed
  after the decision);
- **missed-item rate** of what was held, silenced or put in the digest: the share the person marked wanted,
  or that a later decision about the same fingerprint delivered (it came back, more urgent).

Rates are per-mille integers. Marks are the person's own and stay on their machine.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from gitive.index import ledger as ledger_reads

DELIVERING = ("floor", "alarm", "attention")
MISSABLE = ("hold", "preference", "duplicate", "digest")


def _acted(index: sqlite3.Connection, record: dict[str, Any] | None, after: int) -> bool:
    for a in (record or {}).get("about") or []:
        if a.get("kind") == "obligation":
            row = index.execute("SELECT state_at FROM obligations WHERE id = ? AND state != 'open'",
                                (a.get("id"),)).fetchone()
            if row and row[0] and row[0] >= after:
                return True
    return False


def report(index: sqlite3.Connection, person: str, marks: dict[str, bool], since: int) -> dict[str, Any]:
    """The acted-on and missed-item rates of ``person``'s gate since ``since``."""
    found = ledger_reads.decisions(index, person=person, since=since)
    latest: dict[str, dict[str, Any]] = {}
    delivered_fps: dict[str, int] = {}
    for d in sorted(found, key=lambda d: d["at"]):
        latest[d["item"]] = d
        if d["branch"] in DELIVERING:
            delivered_fps.setdefault(d["fingerprint"], d["at"])
    records = ledger_reads.item_records(index, list(latest))
    would, acted, missable, missed = 0, 0, 0, 0
    for item, d in latest.items():
        if d["branch"] in DELIVERING:
            would += 1
            acted += marks.get(item) is True or _acted(index, records.get(item), d["at"])
        elif d["branch"] in MISSABLE and d["branch"] != "duplicate":
            missable += 1
            came_back = delivered_fps.get(d["fingerprint"], -1) > d["at"]
            missed += marks.get(item) is True or came_back
    shadowed = sum(1 for d in latest.values() if d["shadow"])
    return {"person": person, "since": since, "items": len(latest), "shadow": shadowed,
            "would_deliver": would, "acted_on": acted, "acted_on_permille": acted * 1000 // would if would else None,
            "held_silenced_digested": missable, "missed": missed,
            "missed_permille": missed * 1000 // missable if missable else None,
            "unmarked": sum(1 for item in latest if item not in marks)}
