"""The gate's ledger: one signed, metadata-only entry per decision in each anchor's ``ledger`` log.

An entry holds the item id, the person, the branch and the rule that decided, the urgency with the records it
came from, the source whose budget share it used, and its time (the entry's ``at``). No item text: the team
store is readable by the whole team. Readers count an entry only when an *anchor* machine signed it; a
member's machine that writes one changes nothing anyone sees.

Two views read it: the anchor's own mirror in ``anchor.sqlite`` (duplicates and budgets, across anchors) and,
on any machine, :func:`decisions` (``gitive why``, ``gitive inbox``, the digest, ``gitive gate report``).
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, Any

from gitive.anchor.base import state
from gitive.anchor.gate import prefs as prefs_mod
from gitive.index.queries import VERIFIED

if TYPE_CHECKING:
    from gitive.anchor.gate.order import Decision

_BY_ANCHOR = VERIFIED + " AND m.role = 'anchor'"


def anchors(index: sqlite3.Connection) -> list[str]:
    return [r[0] for r in index.execute("SELECT machine FROM members WHERE role = 'anchor' ORDER BY machine")]


def mirror(index: sqlite3.Connection, st: sqlite3.Connection, people: dict[str, prefs_mod.Prefs]) -> int:
    """Copy every anchor's ledger decisions past their cursors into ``gate_decisions``; how many were new.

    ``people`` is everyone's preferences (a decision counts in its person's local day). Decisions already
    there (this anchor's own, :func:`remember` keeps them as it writes) are not parsed again."""
    added = 0
    for anchor in anchors(index):
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


def until_of(index: sqlite3.Connection, anchor: str, item: str) -> int | None:
    """The ``until`` of the newest decision ``anchor`` signed about ``item`` (a hold's end), from git."""
    for d in decisions(index, item=item):
        if d["anchor"] == anchor:
            return d.get("until")
    return None


def decisions(index: sqlite3.Connection, *, item: str | None = None, person: str | None = None,
              since: int | None = None, limit: int = 10_000) -> list[dict[str, Any]]:
    """Verified decisions signed by anchors, newest first: the record, with ``anchor``, ``seq`` and ``at``.

    ``item`` may be a prefix of at least 6 hex characters.
    """
    sql = _BY_ANCHOR + " AND e.log = 'ledger' AND e.kind = 'ledger'"
    args: list[Any] = []
    if item is not None:
        sql += " AND json_extract(e.envelope, '$.body.record.item') LIKE ?"
        args.append(item.lower() + "%")
    if person is not None:
        sql += " AND json_extract(e.envelope, '$.body.record.person') = ?"
        args.append(person)
    if since is not None:
        sql += " AND e.at >= ?"
        args.append(since)
    sql += " ORDER BY e.at DESC, e.seq DESC LIMIT ?"
    args.append(limit)
    out = []
    for author, _, seq, _, _, at, envelope, _, _ in index.execute(sql, args):
        out.append(json.loads(envelope)["body"]["record"] | {"anchor": author, "seq": seq, "at": at})
    return out


def item_records(index: sqlite3.Connection, ids: list[str] | None = None, *, prefix: str | None = None
                 ) -> dict[str, dict[str, Any]]:
    """item id -> its verified ``item`` record (with ``author``): an anchor's own, or a member's proposal."""
    sql = VERIFIED.replace("SELECT e.author,", "SELECT m.role, e.author,", 1) + " AND e.kind = 'item'"
    args: list[Any] = []
    if prefix is not None:
        sql += " AND json_extract(e.envelope, '$.body.record.id') LIKE ?"
        args.append(prefix.lower() + "%")
    elif ids is not None:
        if not ids:
            return {}
        sql += f" AND json_extract(e.envelope, '$.body.record.id') IN ({','.join('?' * len(ids))})"
        args += ids
    out: dict[str, dict[str, Any]] = {}
    for row in index.execute(sql, args):
        role, author, envelope = row[0], row[1], row[7]
        record = json.loads(envelope)["body"]["record"]
        source_kind = (record.get("source") or {}).get("kind")
        if role != "anchor" and source_kind != "session":
            continue  # only an anchor makes items of other sources (see gating._proposal)
        out.setdefault(record["id"], record | {"author": author, "author_role": role})
    return out
