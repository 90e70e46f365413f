"""The gate's ledger: one signed, metadata-only entry per decision in each anchor's ``ledger`` log.

An entry holds the item id, the person, the branch and the rule that decided, the urgency with the records it
came from, the source whose budget share it used, and its time (the entry's ``at``). No item text: the team
store is readable by the whole team. Readers count an entry only when an *anchor* machine signed it; a
member's machine that writes one changes nothing anyone sees.

Two views read it: the anchor's own mirror in ``anchor.sqlite`` (duplicates and budgets, across anchors), kept
here, and on any machine :mod:`gitive.index.ledger` (``gitive why``, ``gitive inbox``, the digest, ``gitive gate
report``, the daemon's delivery).
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, Any

from gitive.anchor.base import state
from gitive.anchor.gate import prefs as prefs_mod
from gitive.index import ledger as ledger_reads
from gitive.index.ledger import _BY_ANCHOR

if TYPE_CHECKING:
    from gitive.anchor.gate.order import Decision


def mirror(index: sqlite3.Connection, st: sqlite3.Connection, people: dict[str, prefs_mod.Prefs]) -> int:
    """Copy every anchor's ledger decisions past their cursors into ``gate_decisions``; how many were new.

    ``people`` is everyone's preferences (a decision counts in its person's local day). Decisions already
    there (this anchor's own, :func:`remember` keeps them as it writes) are not parsed again."""
    added = 0
    for anchor in ledger_reads.anchors(index):
        key = f"gate-mirror:{anchor}"
        seen = state.get(st, key) or 0
        known = {r[0] for r in st.execute("SELECT seq FROM gate_decisions WHERE anchor = ? AND seq > ?",
                                          (anchor, seen))}
        rows = index.execute(_BY_ANCHOR + " AND e.author = ? AND e.log = 'ledger' AND e.kind = 'ledger' "
                             "AND e.seq > ? ORDER BY e.seq", (anchor, seen)).fetchall()
        found = []
        for author, _, seq, _, _, at, envelope, _, _ in rows:
            if seq in known:
                continue
            r = json.loads(envelope)["body"]["record"]
            p = people.get(r["person"]) or prefs_mod.Prefs(r["person"])
            found.append((author, seq, r["item"], r["person"], r["fingerprint"], r["branch"], r["source"], at,
                          prefs_mod.day_of(p, at)))
        before = st.total_changes
        st.executemany("INSERT OR IGNORE INTO gate_decisions VALUES (?,?,?,?,?,?,?,?,?)", found)
        added += st.total_changes - before
        if rows:
            state.put(st, key, max(seen, rows[-1][2]), rows[-1][5])
    return added


def remember(st: sqlite3.Connection, anchor: str, decided: list[tuple[int, Decision, str]], at: int) -> None:
    """This anchor's decisions as its ledger holds them: ``(seq, decision, the person's day)``."""
    st.executemany("INSERT OR IGNORE INTO gate_decisions VALUES (?,?,?,?,?,?,?,?,?)",
                   [(anchor, seq, d.item.id, d.person, d.item.fingerprint, d.branch, d.item.source_key, at, day)
                    for seq, d, day in decided])


def decided_by(st: sqlite3.Connection, item: str, anchor: str) -> bool:
    return st.execute("SELECT 1 FROM gate_decisions WHERE item = ? AND anchor = ? LIMIT 1",
                      (item, anchor)).fetchone() is not None


def attention_used(st: sqlite3.Connection, person: str, day: str, source: str | None = None) -> int:
    """Attention items of ``person`` on ``day`` across every anchor (one item counted once), from ``source``."""
    sql = "SELECT COUNT(DISTINCT item) FROM gate_decisions WHERE person = ? AND day = ? AND branch = 'attention'"
    args: list[Any] = [person, day]
    if source is not None:
        sql += " AND source = ?"
        args.append(source)
    return int(st.execute(sql, args).fetchone()[0])


