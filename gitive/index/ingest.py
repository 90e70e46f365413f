"""Feeding the index: verify what is new under every log ref, union it, and recompute the roster.

A cursor per (store, ref) remembers the tip last ingested, so a sync with nothing new costs one ref
comparison per log, and a plain ``git fetch`` done by hand is noticed on the next read.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import sqlite3
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote

import pygit2

from gitive.constants import BODIES_REF_PREFIX, REMOTES_REF_PREFIX
from gitive.index import lessons as lesson_tables
from gitive.index.problems import Report, record_problem
from gitive.index.roster import recompute_roster
from gitive.store import refs, verify
from gitive.store.logs import Entry, read_entry

Progress = Callable[[int, int], None]


def _known(conn: sqlite3.Connection, author: str, log: str) -> Callable[[str], int | None]:
    if not conn.execute("SELECT 1 FROM entries WHERE author = ? AND log = ? LIMIT 1", (author, log)).fetchone():
        return lambda oid: None  # nothing of this log yet: no lookup per commit

    def known(oid: str) -> int | None:
        row = conn.execute("SELECT seq FROM entries WHERE commit_id = ? AND author = ? AND log = ?",
                           (oid, author, log)).fetchone()
        return row[0] if row else None
    return known


_SCOPES: dict[str, str] = {}


def _scope_text(scope: dict[str, Any]) -> str:
    key = next(iter(scope.items()), ("", ""))
    text = _SCOPES.get(f"{key[0]}={key[1]}")
    if text is None:
        text = _SCOPES[f"{key[0]}={key[1]}"] = json.dumps(scope, sort_keys=True)
    return text


def rows_of(entries: list[Entry]) -> list[tuple[Any, ...]]:
    """Index rows for verified entries: (author, log, seq, commit, kind, at, scope, envelope)."""
    return [(e.body["author"], e.body["log"], e.body["seq"], e.commit, e.kind, e.body["at"],
             _scope_text(e.body["scope"]), e.raw.decode()) for e in entries]


def _entry(row: tuple[Any, ...]) -> Entry:
    return Entry(row[3], None, json.loads(row[7]), row[7].encode())


def _insert(conn: sqlite3.Connection, report: Report, source: str, rows: list[tuple[Any, ...]]) -> int:
    """Insert verified rows; a row that collides with a different entry at the same seq is equivocation."""
    before = conn.total_changes
    conn.executemany("INSERT OR IGNORE INTO entries VALUES (?,?,?,?,?,?,?,?)", rows)
    if conn.total_changes - before == len(rows):
        _project(conn, report, rows)
        return len(rows)
    inserted = 0
    for row in rows:
        other = conn.execute("SELECT commit_id FROM entries WHERE author=? AND log=? AND seq=?",
                             row[:3]).fetchone()
        if other and other[0] == row[3]:
            _project(conn, report, [row])
        elif other:
            author, log, seq = row[:3]
            record_problem(conn, report, "equivocation", source, row[3], author, log, seq,
                            f"two different entries claim seq {seq} (other: {other[0][:12]}); both quarantined")
            conn.execute("UPDATE logs SET quarantined_from = MIN(COALESCE(quarantined_from, ?), ?) "
                         "WHERE author = ? AND log = ?", (seq, seq, author, log))
            report.roster_changed = True  # a quarantine hides entries: recompute roster and lesson states
            break
        inserted += 1
    return inserted


def _project(conn: sqlite3.Connection, report: Report, rows: list[tuple[Any, ...]]) -> None:
    for row in rows:
        if row[4] in lesson_tables.KINDS:
            entry = _entry(row)
            lesson_tables.project_entry(conn, entry)
            record = entry.body["record"]
            report.lessons_touched.add(record.get("id") or record.get("about") or record.get("lesson") or "")


Checked = tuple[list[tuple[Any, ...]], "verify.Problem | None"]


def _check(repo: pygit2.Repository, conn: sqlite3.Connection, team_id: str, ref: refs.LogRef,
           tip: str) -> Checked:
    verified, _ = verify.verify_chain(repo, team_id, ref.name, ref.machine, ref.log, tip,
                                      _known(conn, ref.machine, ref.log))
    return rows_of(verified.entries), verified.problem


def _check_job(job: tuple[str, str, str, refs.LogRef, str]) -> Checked:
    """The verification half of one ref, in a worker process (its own repository and read-only index)."""
    repo_path, db_path, team_id, ref, tip = job
    conn = sqlite3.connect(f"file:{quote(db_path)}?mode=ro", uri=True, timeout=30)
    try:
        return _check(pygit2.Repository(repo_path), conn, team_id, ref, tip)
    finally:
        conn.close()


def _ingest_ref(conn: sqlite3.Connection, repo: pygit2.Repository, store: str, team_id: str,
                ref: refs.LogRef, tip: str, report: Report, checked: Checked | None = None) -> bool:
    """Ingest one log ref (verified here, or by a worker already); return true if it added roster entries."""
    cursor = conn.execute("SELECT tip, seq FROM cursors WHERE store = ? AND ref = ?",
                          (store, ref.name)).fetchone()
    rows, problem = checked if checked is not None else _check(repo, conn, team_id, ref, tip)
    if problem:
        p = problem
        record_problem(conn, report, p.kind, ref.name, p.commit, ref.machine, ref.log, p.seq, p.detail)
    conn.execute("INSERT OR IGNORE INTO logs VALUES (?, ?, 0, '', NULL)", (ref.machine, ref.log))
    added = _insert(conn, report, ref.name, rows) if rows else 0
    report.received += added
    tip_seq = _known(conn, ref.machine, ref.log)(tip) or 0
    if cursor and tip_seq and tip_seq < cursor[1]:
        record_problem(conn, report, "rollback", ref.name, tip, ref.machine, ref.log, tip_seq,
                        f"log went back from seq {cursor[1]} to {tip_seq}; entries already verified are kept")
    conn.execute(
        "UPDATE logs SET hwm = s.seq, head = s.commit_id FROM (SELECT seq, commit_id FROM entries "
        "WHERE author = ? AND log = ? ORDER BY seq DESC LIMIT 1) AS s WHERE author = ? AND log = ?",
        (ref.machine, ref.log, ref.machine, ref.log),
    )
    if problem is None:
        # A ref with a problem keeps its old cursor, so it is checked again next time: a transient problem
        # (an entry stamped ahead of our clock) clears by itself, a permanent one stays reported.
        conn.execute("INSERT INTO cursors VALUES (?,?,?,?) ON CONFLICT(store, ref) DO UPDATE SET "
                     "tip = excluded.tip, seq = excluded.seq", (store, ref.name, tip, tip_seq))
    return added > 0 and ref.log == "roster"


def _pin(conn: sqlite3.Connection, repo: pygit2.Repository, me: str | None) -> None:
    """Keep every peer log's verified head reachable locally, so a force-push upstream cannot erase it."""
    for author, log, head, hwm in conn.execute("SELECT author, log, head, hwm FROM logs WHERE head != ''").fetchall():
        if author == me or head not in repo:
            continue
        name = refs.pinned_ref(author, log)
        if refs.tip(repo, name) != head:
            refs.force_set(repo, name, head, "gitive: pin verified head")
            # The pin holds only what was just verified: record it as read, so the next ingest skips it.
            conn.execute("INSERT INTO cursors VALUES (?,?,?,?) ON CONFLICT(store, ref) DO UPDATE SET "
                         "tip = excluded.tip, seq = excluded.seq", (repo.path, name, head, hwm))


PARALLEL_FROM = 20_000  # entries to verify before a second process pays for its start-up


def _estimate(conn: sqlite3.Connection, work: list[tuple[pygit2.Repository, str, refs.LogRef, str]]) -> int:
    """Roughly how many entries the work holds: each tip's seq minus what the index has of that log."""
    total = 0
    for repo, _, ref, tip in work:
        try:
            seq = read_entry(repo, tip).seq
        except Exception:  # malformed tips are found (and reported) by the real walk
            continue
        have = conn.execute("SELECT hwm FROM logs WHERE author = ? AND log = ?", (ref.machine, ref.log)).fetchone()
        total += max(0, seq - (have[0] if have else 0))
    return total


def _checked(conn: sqlite3.Connection, team_id: str, work: list[tuple[pygit2.Repository, str, refs.LogRef, str]]
             ) -> Iterator[tuple[tuple[pygit2.Repository, str, refs.LogRef, str], Checked | None]]:
    """Yield each piece of work with its verification done ahead in worker processes when there is a lot
    (a fresh index, a rebuild, a first join): ed25519 verification is the floor of ingest, and PyNaCl holds
    the GIL, so only processes use a second core. Otherwise each ref is verified in turn by the caller."""
    workers = min(4, os.cpu_count() or 1)
    if workers < 2 or len(work) < 2 or _estimate(conn, work) < PARALLEL_FROM:
        for item in work:
            yield item, None
        return
    db_path = conn.execute("PRAGMA database_list").fetchone()[2]
    jobs = [(repo.path, db_path, team_id, ref, tip) for repo, _, ref, tip in work]
    # spawn, not fork: the daemon calls this from a process with threads
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        yield from zip(work, pool.imap(_check_job, jobs, chunksize=1), strict=True)


def ingest(conn: sqlite3.Connection, stores: list[pygit2.Repository], team_id: str, founder: str,
           me: str | None = None, progress: Progress | None = None) -> Report:
    """Verify and index everything new under the log refs of ``stores``, in one transaction."""
    report = Report()
    work: list[tuple[pygit2.Repository, str, refs.LogRef, str]] = []
    moved_bodies: list[tuple[str, str, str]] = []
    for repo in stores:
        store = repo.path
        cursors = dict(conn.execute("SELECT ref, tip FROM cursors WHERE store = ?", (store,)).fetchall())
        for name, tip in refs.tips(repo, "refs/").items():
            if cursors.get(name) == tip:
                continue
            parsed = refs.parse_log_ref(name)
            if parsed:
                work.append((repo, store, parsed, tip))
            elif name.startswith(BODIES_REF_PREFIX) or (name.startswith(REMOTES_REF_PREFIX) and "/bodies/" in name):
                moved_bodies.append((store, name, tip))
    if not work and not moved_bodies and conn.execute("SELECT 1 FROM members LIMIT 1").fetchone():
        return report
    conn.execute("BEGIN IMMEDIATE")
    try:
        # Roster logs first, so a fresh index knows who may sign before it reads anything else.
        work.sort(key=lambda w: (w[2].log != "roster", w[2].source == "pinned", w[2].name))
        for done, ((repo, store, parsed, tip), checked) in enumerate(_checked(conn, team_id, work), 1):
            report.roster_changed |= _ingest_ref(conn, repo, store, team_id, parsed, tip, report, checked)
            report.refs_read += 1
            if progress:
                progress(done, len(work))
        if report.roster_changed or not conn.execute("SELECT 1 FROM members LIMIT 1").fetchone():
            recompute_roster(conn, team_id, founder, report)
        if report.lessons_touched or moved_bodies or report.roster_changed:
            lesson_tables.after_ingest(conn, stores, report.lessons_touched - {""}, report.roster_changed,
                                       team_id=team_id)
        conn.executemany("INSERT INTO cursors VALUES (?,?,?,0) ON CONFLICT(store, ref) DO UPDATE SET "
                         "tip = excluded.tip", moved_bodies)
        for repo in stores:
            _pin(conn, repo, me)
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return report
