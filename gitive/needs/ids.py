"""Any id a surface shows, to the gate item it is about: for ``gitive why``.

Surfaces show different ids for the same thing: an item's (``gitive inbox``, ``gitive digest``, ``gitive next``),
an obligation's (``gitive owed``), a ledger entry's commit (``gitive log --log ledger``), a task's (``gitive review
prepared``). ``why`` takes any of them, or a prefix of at least 6 characters, and answers about the item; an id
that names several items, or none, gets one line saying which.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from typing import Any, NamedTuple

from gitive.errors import GitiveError
from gitive.index import ledger as ledger_reads
from gitive.index.queries import VERIFIED

MIN_PREFIX = 6


class Resolved(NamedTuple):
    item: str
    via: str  # item | obligation | ledger entry | task


class UnknownId(GitiveError):
    pass


def resolve(index: sqlite3.Connection, text: str, person: str | None = None) -> Resolved:
    """The item ``text`` names, by the first kind of id that matches it. A ledger entry of format 2 holds a
    tick's decisions for several people: ``person`` (the one asking) picks theirs out of it.

    Raises:
        UnknownId: too short or not hex, no match, or a prefix of several items.
    """
    prefix = text.strip().lower()
    if len(prefix) < MIN_PREFIX or any(ch not in "0123456789abcdef" for ch in prefix):
        raise UnknownId(f"{text.strip()[:80]!r} is not an id: give at least {MIN_PREFIX} hex characters of an item, "
                        "obligation, task or ledger entry (gitive next, inbox and digest show them)")
    for via, finder in (("item", _items), ("ledger entry", _entries_for(person)),
                        ("obligation", _about("obligation")), ("task", _about("prepared"))):
        found = finder(index, prefix)
        if len(found) == 1:
            return Resolved(found.pop(), via)
        if len(found) > 1 and via == "ledger entry":  # a format-2 entry holds a whole tick's decisions
            raise UnknownId(f"ledger entry {prefix} holds {len(found)} decisions ({', '.join(sorted(i[:12] for i in found))})"
                            "; ask `gitive why ITEM` for one of them")
        if len(found) > 1:
            raise UnknownId(f"{prefix} names {len(found)} items by {via} id ({', '.join(sorted(i[:12] for i in found))})"
                            "; give more characters")
    raise UnknownId(_none_found(index, prefix))


def _items(index: sqlite3.Connection, prefix: str) -> set[str]:
    return {d["item"] for d in ledger_reads.decisions(index, item=prefix)} | set(
        ledger_reads.item_records(index, prefix=prefix))


def _entries_for(person: str | None) -> Callable[[sqlite3.Connection, str], set[str]]:
    """Items of the ledger entries (decisions, batches of them, or item records) whose commit id starts with the
    prefix; of a batch (ledger format 2), only ``person``'s decisions when a person is given."""
    def find(index: sqlite3.Connection, prefix: str) -> set[str]:
        rows = index.execute(VERIFIED + " AND e.log = 'ledger' AND e.kind IN ('ledger', 'ledger-batch', 'item') "
                             "AND e.commit_id LIKE ?", (prefix + "%",)).fetchall()
        out = set()
        for row in rows:
            record = json.loads(row[6])["body"]["record"]
            if record.get("type") == "ledger-batch":
                out |= {str(d["item"]) for d in record.get("decisions") or []
                        if isinstance(d, dict) and d.get("item") and person in (None, d.get("person"))}
            else:
                out.add(str(record.get("item") or record.get("id")))
        return out
    return find


def _about(source_kind: str) -> Callable[[sqlite3.Connection, str], set[str]]:
    """Items made from the obligation (or task) whose id starts with the prefix: its newest item only, since an
    obligation that fired and later lapsed has one item for each and the newest is what a person asks about."""
    def find(index: sqlite3.Connection, prefix: str) -> set[str]:
        records = [r for r in ledger_reads.item_records(index).values()
                   if (r.get("source") or {}).get("kind") == source_kind
                   and str((r.get("source") or {}).get("ref") or "").startswith(prefix)]
        by_ref: dict[str, dict[str, Any]] = {}
        for r in sorted(records, key=lambda r: int(r.get("created") or 0)):
            by_ref[str(r["source"]["ref"])] = r  # the newest last
        return {str(r["id"]) for r in by_ref.values()}
    return find


def notice(index: sqlite3.Connection, text: str) -> dict[str, Any] | None:
    """The anchor's notice (a speculative merge, a rescue) with message id ``text``, or None: what ``gitive why``
    says of an id an anchor's notice showed. Only a message an *anchor* machine signed counts."""
    ident = text.strip().upper()
    if len(ident) != 26 or not ident.isalnum():
        return None
    for row in index.execute(VERIFIED + " AND e.kind = 'message' AND json_extract(e.envelope, '$.body.record.id') = ?",
                             (ident,)):
        role = index.execute("SELECT role FROM members WHERE machine = ?", (row[0],)).fetchone()
        record = json.loads(row[6])["body"]["record"]
        if role and role[0] == "anchor" and str(record.get("from", "")).startswith("anchor/"):
            return {"id": ident, "from": record["from"], "to": record.get("to"), "body": record.get("body"),
                    "at": row[5], "anchor": row[0]}
    return None


NOTICE_WHY = {
    "anchor/merges": "the anchor merged two pushed branches of different people in a scratch worktree and the merge "
                     "conflicts or fails the tests that pass on each branch; it tells the live sessions on them, once "
                     "per session and pair (docs/prepared.md)",
    "anchor/rescue": "this session kept hitting the same failure, and the anchor found what the team already knows "
                     "about it (docs/prepared.md)",
}


def _none_found(index: sqlite3.Connection, prefix: str) -> str:
    ob = index.execute("SELECT id FROM obligations WHERE id LIKE ? LIMIT 1", (prefix + "%",)).fetchone()
    if ob:
        return (f"obligation {ob[0][:12]} has no item yet: it has not fired, passed its deadline or neared its expiry "
                "(`gitive owed` shows its state)")
    return (f"no item, obligation, task or ledger entry {prefix}: the gate has not decided it (run `gitive sync`; "
            "proposals wait for the anchor's next tick)")
