"""Candidate items and where the tick hands them: a plain queue until the gate (issue 11) takes its place.

A fired obligation becomes an :class:`Item`, never a direct interruption (DESIGN §8). The tick knows only the
:class:`gitive.anchor.base.context.Gate` protocol; :class:`Queue` is the implementation it has today, which holds items for
``gitive anchor status``. Offering the same item twice is a no-op (its id is stable), which is what lets the
tick re-offer every firing after a crash without showing anything twice.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any, NamedTuple

from gitive.anchor.gate import items
from gitive.core.ids import record_id


class Item(NamedTuple):
    id: str  # stable across anchors: the gate's item id (items.obligation_item_id)
    fingerprint: str  # same owner, same action, same reason: the gate's duplicate check
    kind: str  # obligation.fired | obligation.due | obligation.lapsing
    obligation: str
    owner: str
    to: str | None
    action: str
    due: int  # when it became due (the event's time, the deadline, the lapse warning)
    fired: int  # when the anchor fired it
    late: bool
    event: dict[str, Any]  # metadata of what satisfied it

    def as_dict(self) -> dict[str, Any]:
        return self._asdict()


KIND_OF = {"condition": "obligation.fired", "deadline": "obligation.due", "lapsing": "obligation.lapsing"}


def item_for(obligation: dict[str, Any], reason: str, due: int, fired: int, late: bool,
             event: dict[str, Any] | None) -> Item:
    action = " ".join(obligation["action"].lower().split())
    return Item(items.obligation_item_id(obligation["id"], reason, event), record_id("fingerprint", obligation["owner"], action,
                                                                       reason),
                KIND_OF[reason], obligation["id"], obligation["owner"], obligation.get("to"), obligation["action"],
                due, fired, late, event or {})



class Queue:
    """The gate's stand-in: items wait here, in the anchor's state database, in the order they fired."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def offer(self, item: Item) -> bool:
        before = self.conn.total_changes
        self.conn.execute("INSERT OR IGNORE INTO queue VALUES (?,?,?,?,?,?,?,?,?,?,?,'queued',?)",
                          (item.id, item.fingerprint, item.kind, item.obligation, item.owner, item.to, item.action,
                           item.due, item.fired, int(item.late), json.dumps(item.event, sort_keys=True), item.fired))
        return self.conn.total_changes > before

    def items(self, state: str | None = "queued", limit: int = 1000) -> list[dict[str, Any]]:
        sql = "SELECT id, fingerprint, kind, obligation, owner, to_, action, due, fired, late, event, state FROM queue"
        args: list[Any] = []
        if state:
            sql += " WHERE state = ?"
            args.append(state)
        sql += " ORDER BY fired, id LIMIT ?"
        args.append(limit)
        keys = ("id", "fingerprint", "kind", "obligation", "owner", "to", "action", "due", "fired", "late",
                "event", "state")
        out = []
        for row in self.conn.execute(sql, args):
            item = dict(zip(keys, row, strict=True))
            item["late"], item["event"] = bool(item["late"]), json.loads(item["event"])
            out.append(item)
        return out

    def has(self, item_id: str) -> bool:
        return self.conn.execute("SELECT 1 FROM queue WHERE id = ?", (item_id,)).fetchone() is not None
