"""The ``entries`` table: rows of verified entries, inserted with equivocation found by entry hash.

An entry's identity is the hash of its ``entry.json`` bytes (docs/verification.md §1). Two commits carrying the
same bytes are one entry; two authentic entries with different hashes for one (author, log, seq) are an
equivocation: the log is quarantined from that seq, and the other entry's commit is pinned under
``refs/hive-pinned/forks/`` so that a rebuild sees the same fork even after a source drops it.

A row keeps what readers need of an entry: its place, kind, time, scope and hash as columns, and as
``envelope`` only ``{"body":{"record":…}}`` (index step 0010). The signed bytes stay in the entry's commit:
the background signature check reads them back by commit id. Roster entries keep the whole envelope, since
the roster is merged from their signatures and signers.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from gitive.core import signed
from gitive.errors import InvalidRecord
from gitive.index import decisions, sealed
from gitive.index import lessons as lesson_tables
from gitive.index.db import meta_get, meta_set
from gitive.index.envelopes import stored_envelope
from gitive.index.problems import Report, record_problem
from gitive.store import logs, refs
from gitive.store.logs import Entry

if TYPE_CHECKING:
    from gitive.store.types import Repo

# (author, log, seq, commit, kind, at, scope, entry to project or None, hash, sig_checked, stored envelope)
Row = tuple[Any, ...]
COLUMNS = "author, log, seq, commit_id, kind, at, scope, envelope, hash, sig_checked"
_INSERT = f"INSERT OR IGNORE INTO entries({COLUMNS}) VALUES (?,?,?,?,?,?,?,?,?,?)"

# sig_checked: 1 = its own signature verified; 0 = authenticated by the hash link above it, its own signature
# not checked yet; 2 = its own signature checked and found bad (reported; still authentic through the link).
UNCHECKED, CHECKED, BAD_INNER = 0, 1, 2

_SCOPES: dict[str, str] = {}


def _scope_text(scope: dict[str, Any]) -> str:
    key = next(iter(scope.items()), ("", ""))
    text = _SCOPES.get(f"{key[0]}={key[1]}")
    if text is None:
        text = _SCOPES[f"{key[0]}={key[1]}"] = json.dumps(scope, sort_keys=True)
    return text


def _stored(row: Row) -> Row:
    """``row`` as inserted: the kept part of its envelope in place of the whole one (which projecting needs)."""
    return (*row[:7], row[10], row[8], row[9])


# Kinds projected into tables of their own as they are inserted: only their rows carry the parsed entry.
PROJECTED = frozenset(lesson_tables.KINDS) | frozenset(sealed.KINDS) | frozenset(decisions.DECIDING)


def rows_of(entries: list[Entry], checked: tuple[bool, ...] | list[bool] | None = None) -> list[Row]:
    """Index rows for verified entries (``insert`` keeps what ``stored_envelope`` says); ``checked[i]`` says
    whether entry i's own signature was verified. An entry of a projected kind rides along as parsed (without
    its bytes), so projecting it parses nothing again, in this process or after a worker sent it."""
    flags = checked if checked is not None else [True] * len(entries)
    return [(e.body["author"], e.body["log"], e.body["seq"], e.commit, e.kind, e.body["at"],
             _scope_text(e.body["scope"]), e._replace(raw=b"", digest="") if e.kind in PROJECTED else None,
             e.hash, CHECKED if ok else UNCHECKED, stored_envelope(e))
            for e, ok in zip(entries, flags, strict=True)]


def _project(conn: sqlite3.Connection, report: Report, rows: list[Row]) -> None:
    for row in rows:
        entry = row[7]
        if entry is None:
            continue
        if row[4] in lesson_tables.KINDS:
            if row[6].startswith('{"personal"') and not _personal_counts(conn, row):
                continue  # someone else's, or pushed by a machine not theirs: personal scope is one person's
            lesson_tables.project_entry(conn, entry)
            record = entry.body["record"]
            report.lessons_touched.add(record.get("id") or record.get("about") or record.get("lesson") or "")
        elif row[4] in sealed.KINDS:
            sealed.record(conn, entry)
        elif row[4] in decisions.DECIDING:  # prefs, gate-live, standing and obligation decisions
            decisions.note(conn, report, row[0], row[1], row[2], row[5], entry.body["record"])


def _personal_counts(conn: sqlite3.Connection, row: Row) -> bool:
    return sealed.personal_counts(conn, row[0], json.loads(row[6])["personal"])


def insert(conn: sqlite3.Connection, report: Report, repo: Repo, source: str,
           rows: list[Row]) -> int:
    """Insert verified rows of one log, oldest first; stop at an equivocation. Returns the rows inserted."""
    conn.execute("SAVEPOINT entries_insert")
    before = conn.total_changes
    conn.executemany(_INSERT, [_stored(row) for row in rows])
    if conn.total_changes - before == len(rows):
        conn.execute("RELEASE entries_insert")
        _project(conn, report, rows)
        return len(rows)
    # Some rows are there already (another source of the same log read in this batch) or collide: go one
    # by one, so only what is new is projected and an equivocation stops what lies above it.
    conn.execute("ROLLBACK TO entries_insert")
    conn.execute("RELEASE entries_insert")
    inserted = 0
    for row in rows:
        if conn.execute(_INSERT, _stored(row)).rowcount == 1:
            _project(conn, report, [row])
            inserted += 1
            continue
        other = conn.execute("SELECT commit_id, hash FROM entries WHERE author=? AND log=? AND seq=?",
                             row[:3]).fetchone()
        if other is None or other[1] == row[8]:
            continue  # the same entry (perhaps wrapped in another commit below an old v1 fork)
        _equivocation(conn, report, repo, row, other[0])
        break
    return inserted


def _equivocation(conn: sqlite3.Connection, report: Report, repo: Repo, row: Row,
                  other: str) -> None:
    author, log, seq, commit = row[:4]
    first, second = sorted((commit, other))  # the same record whichever entry was read first
    record_problem(conn, report, "equivocation", refs.log_ref(author, log), first, author, log, seq,
                   f"two different entries claim seq {seq} ({first[:12]} and {second[:12]}); "
                   "both quarantined from there")
    conn.execute("UPDATE logs SET quarantined_from = MIN(COALESCE(quarantined_from, ?), ?) "
                 "WHERE author = ? AND log = ?", (seq, seq, author, log))
    decisions.quarantined(conn, report, author, log, seq)  # copies from there on count nowhere
    report.quarantined = True  # a quarantine hides entries: lesson states (and a roster) are recomputed
    if log == "roster":
        report.roster_changed = True
    fork = refs.fork_ref(author, log, commit)
    if refs.tip(repo, fork) != commit:
        refs.force_set(repo, fork, commit, "gitive: keep an equivocating entry")
    conn.execute("INSERT INTO cursors(store, ref, tip, seq) VALUES (?,?,?,?) ON CONFLICT(store, ref) DO UPDATE "
                 "SET tip = excluded.tip", (repo.path, fork, commit, seq))


def _signed_entry(stores: Sequence[Repo], commit: str) -> Entry | None:
    """The entry of ``commit`` as its commit holds it (None: no store has it, or it no longer reads)."""
    for repo in stores:
        try:
            return logs.read_entry(repo, commit)
        except InvalidRecord:
            continue
    return None


def check_signatures(conn: sqlite3.Connection, team_id: str, stores: Sequence[Repo],
                     limit: int | None = None) -> tuple[int, int]:
    """Check the own signatures of entries authenticated by a hash link only (background work, bounded).

    An inner signature that fails leaves the entry authentic (its successor vouches for its bytes) but is
    reported as ``inner-signature``: the author's machine wrote something no honest writer does. The signed
    bytes are read back from the entry's commit in ``stores`` (the index keeps only the record); an entry
    whose commit no store holds stays unchecked. Rows are taken in rowid order from a watermark in ``meta``
    (no index to keep up on the hot insert path).

    Returns:
        (entries checked, signatures that failed).
    """
    upto = int(meta_get(conn, "inner-signatures-upto") or 0)
    sql = ("SELECT rowid, author, log, seq, commit_id, hash FROM entries WHERE rowid > ? AND sig_checked = 0 "
           "ORDER BY rowid")
    rows = conn.execute(sql + (" LIMIT ?" if limit is not None else ""),
                        (upto, limit) if limit is not None else (upto,)).fetchall()
    checked, failed = [], []
    for rowid, author, log, seq, commit, digest in rows:
        entry = _signed_entry(stores, commit)
        if entry is None or entry.hash != digest:
            continue
        checked.append((rowid,))
        env = entry.signed
        if not signed.signature_ok_raw(team_id, entry.kind, env["by"], env["sig"], entry.body_bytes):
            failed.append((rowid, author, log, seq, commit))
    conn.executemany("UPDATE entries SET sig_checked = 1 WHERE rowid = ?", checked)
    report = Report()
    for rowid, author, log, seq, commit in failed:
        conn.execute("UPDATE entries SET sig_checked = 2 WHERE rowid = ?", (rowid,))
        record_problem(conn, report, "inner-signature", refs.log_ref(author, log), commit, author, log, seq,
                       "this entry's own signature does not verify; the entry above it vouches for its bytes")
    if rows:
        meta_set(conn, "inner-signatures-upto", str(rows[-1][0]))
    return len(checked), len(failed)
