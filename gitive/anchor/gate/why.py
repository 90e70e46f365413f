"""``gitive why ITEM``: why the gate told a person something, or why it did not.

Read from the replicated ledger (every anchor's decisions about the item, oldest first) and the item record,
plus, on the person's own machine, when and where it was shown. The answer names the rule that decided and
the records urgency came from, so anyone can check it.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from gitive.core.ids import id_prefix
from gitive.errors import GitiveError, quoted
from gitive.index import ledger as ledger_reads

_SAYS = {
    "floor": "delivered: a floor, which reaches its owner whatever the preferences, quiet hours, budget or shadow",
    "preference": "not delivered: silenced by the person's preferences",
    "duplicate": "not delivered: silenced as a duplicate",
    "alarm": "delivered at once: an alarm, and the person enabled alarms",
    "hold": "held: quiet hours; it re-enters the gate when they end",
    "attention": "delivered at the person's next breakpoint (a commit, a test run, a minute idle), or by the "
                 "deferral's end",
    "digest": "not delivered: put in the digest",
    "note": "delivered: the digest, at the time the person chose",
}


class UnknownItem(GitiveError):
    pass


def explain(index: sqlite3.Connection, prefix: str, shown: dict[str, Any] | None = None) -> dict[str, Any]:
    """Everything the ledger says about the item ``prefix`` names (at least 6 hex characters).

    Raises:
        UnknownItem: no item or decision has that id, or the prefix is ambiguous or too short.
    """
    given, prefix = prefix, id_prefix(prefix, 6) or ""
    if not prefix:
        raise UnknownItem(f"no such item {quoted(given.strip())}: an item id is 6 to 64 hex characters (gitive "
                          "inbox and gitive digest show them)")
    found = ledger_reads.decisions(index, item=prefix)
    ids = {d["item"] for d in found} | set(ledger_reads.item_records(index, prefix=prefix))
    if not ids:
        raise UnknownItem(f"no item {prefix}: the gate has not decided it (run `gitive sync`; proposals wait for "
                          "the anchor's next tick)")
    if len(ids) > 1:
        raise UnknownItem(f"{prefix} names {len(ids)} items ({', '.join(sorted(i[:12] for i in ids))}); give more "
                          "characters")
    item = ids.pop()
    record = ledger_reads.item_records(index, [item]).get(item)
    steps = []
    for d in sorted(found, key=lambda d: (d["at"], d["anchor"], d["seq"], d.get("n", 0))):
        says = _SAYS[d["branch"]]
        if d["shadow"] and d["branch"] in ("alarm", "attention", "note"):
            says = "not delivered (the person's gate is in shadow): it would have been " + says.split(": ", 1)[0]
        steps.append(d | {"says": says, "delivered": d["branch"] == "floor" or (
            d["branch"] in ("alarm", "attention", "note") and not d["shadow"])})
    return {"item": item, "record": record, "decisions": steps, "shown": shown,
            "delivered": any(s["delivered"] for s in steps)}
