"""One account of a gate item for its person, the same words on every surface.

``gitive inbox``, ``gitive digest``, ``gitive why``, ``gitive next`` and the dashboard each used to say something
of their own about the same item (an item decided in shadow was "no items" in one, "delivered" in another and
"not delivered" in a third). They all call :func:`of` now, on the gate's own read functions
(:mod:`gitive.index.ledger`): the newest decision any anchor signed about the item for that person decides what
is said. The ledger stays metadata-only; titles come from the item records this machine holds.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from typing import Any, NamedTuple

from gitive.index import ledger as ledger_reads

DELIVERING = ("floor", "alarm", "attention", "note")  # the gate's branches that reach a person (or would, live)
SHADOW = "would have been delivered: your gate is in shadow (`gitive gate live` to turn it on)"
_WORDS = {
    "floor": "delivered: a floor (a security finding), which reaches you whatever your preferences or shadow",
    "alarm": "delivered at once: an alarm",
    "attention": "delivered at your next breakpoint",
    "note": "delivered: your digest",
    "hold": "held for your quiet hours",
    "preference": "not delivered: silenced by your preferences",
    "duplicate": "not delivered: silenced as a duplicate",
    "digest": "not delivered: put in your digest",
}


def utc_minute(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%d %H:%M UTC")


class Account(NamedTuple):
    item: str
    state: str  # delivered | would-deliver | held | silenced | digested | undecided
    words: str  # the one line every surface prints
    branch: str | None
    shadow: bool
    at: int | None  # when the newest decision was made
    title: str
    kind: str


def state_of(decision: dict[str, Any] | None) -> str:
    if decision is None:
        return "undecided"
    branch = decision["branch"]
    if branch == "floor" or (branch in DELIVERING and not decision["shadow"]):
        return "delivered"
    if branch in DELIVERING:
        return "would-deliver"
    return {"hold": "held", "digest": "digested"}.get(branch, "silenced")


def words_of(decision: dict[str, Any] | None) -> str:
    """The sentence for the newest decision (None: the gate has not decided the item yet)."""
    if decision is None:
        return "not decided yet: the anchor's gate decides it at its next tick"
    if state_of(decision) == "would-deliver":
        return SHADOW
    words = _WORDS.get(decision["branch"], decision["branch"])
    if decision["branch"] == "hold" and decision.get("until"):
        words += f", until {utc_minute(int(decision['until']))}"
    return words


def of(decision: dict[str, Any] | None, record: dict[str, Any] | None, item: str) -> Account:
    record = record or {}
    return Account(item, state_of(decision), words_of(decision), decision["branch"] if decision else None,
                   bool(decision and decision["shadow"]), decision["at"] if decision else None,
                   str(record.get("title") or "(the item's record has not reached this machine yet)"),
                   str(record.get("kind") or "item"))


def newest(index: sqlite3.Connection, person: str, since: int | None = None) -> dict[str, dict[str, Any]]:
    """item -> the newest decision about it for ``person`` (any anchor), from the ledger."""
    out: dict[str, dict[str, Any]] = {}
    for d in ledger_reads.decisions(index, person=person, since=since):
        out.setdefault(d["item"], d)  # decisions come newest first
    return out


def accounts(index: sqlite3.Connection, person: str, since: int | None = None) -> list[Account]:
    """Every item decided for ``person`` since ``since``, newest decision first, each with its account."""
    latest = newest(index, person, since)
    records = ledger_reads.item_records(index, list(latest))
    return [of(d, records.get(item), item) for item, d in latest.items()]


def for_item(index: sqlite3.Connection, item: str, person: str | None = None) -> Account:
    """The account of one item (full id), for ``person`` or, when None, for whoever the newest decision names."""
    found = [d for d in ledger_reads.decisions(index, item=item) if d["item"] == item
             and (person is None or d["person"] == person)]
    record = ledger_reads.item_records(index, [item]).get(item)
    return of(found[0] if found else None, record, item)


def inbox(index: sqlite3.Connection, delivered: list[dict[str, Any]], person: str, now: int,
          days: int = 7) -> list[dict[str, Any]]:
    """``gitive inbox``'s items: what this machine showed (``delivered``, :func:`gitive.daemon.anchor_items.items`)
    and what in shadow would have been delivered in the last ``days``, newest first, each with its account."""
    found = {a.item: a for a in accounts(index, person, since=now - days * 86_400_000)}
    rows = []
    for row in delivered:
        a = found.get(row["item"])
        rows.append(row | {"account": a.words if a else words_of({"branch": row["branch"], "shadow": False})})
    shown = {row["item"] for row in delivered}
    for a in found.values():
        if a.state == "would-deliver" and a.item not in shown:
            rows.append({"item": a.item, "branch": a.branch, "anchor": None, "decided_at": a.at, "title": a.title,
                         "kind": a.kind, "rule": None, "state": "would-deliver", "shown_at": None, "sessions": [],
                         "account": a.words})
    return sorted(rows, key=lambda r: (-(r["decided_at"] or 0), r["item"]))
