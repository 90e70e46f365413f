"""The gate's ledger: signed, metadata-only decisions in each anchor's ``ledger`` log.

Format 2 (written now): one ``ledger-batch`` entry per tick holds that tick's decisions, in the order the gate
took them (another entry when one would pass 64 KiB). A decision is addressed by (anchor, seq, n), its place in
the entry, and found by its item id; one signature and one commit cover a tick's decisions, instead of one each
(issue 21: the signing and the commit per decision were the gate's floor; and a tick that writes a few entries
stays under ``git fast-import``'s start-up cost). Format 1
(one ``ledger`` entry per decision, n = 0) is still read. Each decision holds the item id, the person, the
branch and the rule that decided, the urgency with the records it came from, the source whose budget share it
used; its time is the entry's ``at``. No item text: the team store is readable by the whole team. Readers count
an entry only when an *anchor* machine signed it; a member's machine that writes one changes nothing anyone
sees.

Two views read it: the anchor's own mirror in ``anchor.sqlite`` (duplicates and budgets, across anchors), kept
here, and on any machine :mod:`gitive.index.ledger` (``gitive why``, ``gitive inbox``, the digest, ``gitive gate
report``, the daemon's delivery).
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gitive.anchor.base import state
from gitive.anchor.gate import prefs as prefs_mod
from gitive.core import canonical
from gitive.index import ledger as ledger_reads
from gitive.index.ledger import _BY_ANCHOR

if TYPE_CHECKING:
    from gitive.anchor.gate.order import Decision


LEDGER_VERSION = 2
MAX_BATCH_BYTES = 64 * 1024  # under the 96 KiB entry cap with room for the envelope


def batches(decisions: list[Decision]) -> list[tuple[dict[str, Any], list[Decision]]]:
    """The ``ledger-batch`` records of a tick's ``decisions``, in order: one, or a new one whenever it would pass
    :data:`MAX_BATCH_BYTES`. With the decisions each record holds."""
    out: list[tuple[dict[str, Any], list[Decision]]] = []
    size = 0
    held: list[dict[str, Any]] = []
    kept: list[Decision] = []
    for d in decisions:
        record = d.record()
        del record["type"]
        cost = len(canonical.dumps_trusted(record)) + 1
        if held and size + cost > MAX_BATCH_BYTES:
            out.append((_batch(held), kept))
            size, held, kept = 0, [], []
        size += cost
        held.append(record)
        kept.append(d)
    if held:
        out.append((_batch(held), kept))
    return out


def _batch(decisions: list[dict[str, Any]]) -> dict[str, Any]:
    return {"type": "ledger-batch", "v": LEDGER_VERSION, "decisions": decisions}


def mirror(index: sqlite3.Connection, st: sqlite3.Connection, people: dict[str, prefs_mod.Prefs]) -> int:
    """Copy every anchor's ledger decisions past their cursors into ``gate_decisions``; how many were new.

    ``people`` is everyone's preferences (a decision counts in its person's local day). Entries already there
    (this anchor's own, :func:`remember` keeps them as it writes) are not parsed again."""
    added = 0
    for anchor in ledger_reads.anchors(index):
        key = f"gate-mirror:{anchor}"
        seen = state.get(st, key) or 0
        known = {r[0] for r in st.execute("SELECT DISTINCT seq FROM gate_decisions WHERE anchor = ? AND seq > ?",
                                          (anchor, seen))}
        rows = index.execute(_BY_ANCHOR + " AND e.author = ? AND e.log = 'ledger' AND e.kind IN ('ledger', "
                             "'ledger-batch') AND e.seq > ? ORDER BY e.seq", (anchor, seen)).fetchall()
        found = []
        for author, _, seq, _, kind, at, envelope, _, _ in rows:
            if seq not in known:
                found += _rows(author, seq, kind, at, json.loads(envelope)["body"]["record"], people)
        before = st.total_changes
        st.executemany("INSERT OR IGNORE INTO gate_decisions VALUES (?,?,?,?,?,?,?,?,?,?)", found)
        added += st.total_changes - before
        if rows:
            state.put(st, key, max(seen, rows[-1][2]), rows[-1][5])
    return added


def _rows(author: str, seq: int, kind: str, at: int, record: dict[str, Any], people: dict[str, prefs_mod.Prefs]
          ) -> list[tuple[Any, ...]]:
    """The mirror's rows of one ledger entry of either format (a malformed decision is skipped)."""
    found = [record] if kind == "ledger" else record.get("decisions") or []
    out = []
    for n, r in enumerate(found):
        if isinstance(r, dict) and all(isinstance(r.get(k), str) for k in ("item", "person", "fingerprint",
                                                                          "branch", "source")):
            p = people.get(r["person"]) or prefs_mod.Prefs(r["person"])
            out.append((author, seq, r["item"], r["person"], r["fingerprint"], r["branch"], r["source"], at,
                        prefs_mod.day_of(p, at), n))
    return out


def remember(st: sqlite3.Connection, anchor: str, decided: list[tuple[int, int, Decision, str]], at: int) -> None:
    """This anchor's decisions as its ledger holds them: ``(seq, place in the entry, decision, the person's
    day)``."""
    st.executemany("INSERT OR IGNORE INTO gate_decisions VALUES (?,?,?,?,?,?,?,?,?,?)",
                   [(anchor, seq, d.item.id, d.person, d.item.fingerprint, d.branch, d.item.source_key, at, day, n)
                    for seq, n, d, day in decided])


@dataclass
class Known:
    """What the mirror says about a tick's candidates, read in a few statements instead of two per candidate:
    which anchors decided each item (and how), and per (person, fingerprint) the items decided in the duplicate
    window that count as a prior (not silenced themselves), oldest first."""

    items: set[str] = field(default_factory=set)
    anchors: dict[str, dict[str, str]] = field(default_factory=dict)
    by_fingerprint: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    _fingerprints: set[str] = field(default_factory=set)

    def add(self, other: Known) -> None:
        self.items |= other.items
        for item, found in other.anchors.items():
            self.anchors.setdefault(item, {}).update(found)
        for key, found in other.by_fingerprint.items():
            if key[1] not in self._fingerprints:
                self.by_fingerprint[key] = found
        self._fingerprints |= other._fingerprints


def prior_decisions(st: sqlite3.Connection, found: list[tuple[str, str]], since: int) -> Known:
    """:class:`Known` for the items ``found`` (``(id, fingerprint)``; a fingerprint's decisions from ``since``)."""
    known = Known(items={i for i, _ in found})
    for chunk in range(0, len(found), 500):
        ids = sorted({i for i, _ in found[chunk:chunk + 500]})
        fps = sorted({f for _, f in found[chunk:chunk + 500]} - known._fingerprints)
        for item, anchor, branch in st.execute(f"SELECT item, anchor, branch FROM gate_decisions WHERE item IN "
                                               f"({','.join('?' * len(ids))}) ORDER BY seq, n", ids):
            known.anchors.setdefault(item, {}).setdefault(anchor, branch)
        known._fingerprints |= set(fps)
        for person, fp, item in st.execute(
                f"SELECT person, fingerprint, item FROM gate_decisions WHERE fingerprint IN ({','.join('?' * len(fps))}"
                ") AND at >= ? AND branch NOT IN ('preference', 'duplicate') ORDER BY at", [*fps, since]):
            prior = known.by_fingerprint.setdefault((person, fp), [])
            if item not in prior:
                prior.append(item)
    return known


def attention_on(st: sqlite3.Connection, day: str) -> tuple[dict[str, int], dict[tuple[str, str], int]]:
    """Every person's attention items on ``day`` across every anchor (one item counted once), and per (person,
    source): :func:`attention_used` for a whole tick in two statements, not two per person and source."""
    people = dict(st.execute("SELECT person, COUNT(DISTINCT item) FROM gate_decisions WHERE day = ? AND "
                             "branch = 'attention' GROUP BY person", (day,)).fetchall())
    sources = {(p, s): n for p, s, n in st.execute(
        "SELECT person, source, COUNT(DISTINCT item) FROM gate_decisions WHERE day = ? AND branch = 'attention' "
        "GROUP BY person, source", (day,))}
    return people, sources


def attention_used(st: sqlite3.Connection, person: str, day: str, source: str | None = None) -> int:
    """Attention items of ``person`` on ``day`` across every anchor (one item counted once), from ``source``."""
    sql = "SELECT COUNT(DISTINCT item) FROM gate_decisions WHERE person = ? AND day = ? AND branch = 'attention'"
    args: list[Any] = [person, day]
    if source is not None:
        sql += " AND source = ?"
        args.append(source)
    return int(st.execute(sql, args).fetchone()[0])


