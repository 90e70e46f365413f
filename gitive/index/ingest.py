"""Feeding the index: verify what is new under every log ref, union it, and recompute the roster.

A cursor per (store, ref) remembers the tip last read, refused or not, so a sync with nothing new costs one
ref comparison per log, junk costs one comparison after its first walk, and a plain ``git fetch`` done by hand
is noticed on the next read. Roster logs are read first; a log of a machine the roster does not admit is not
walked at all, but refused by its tip until the roster changes (docs/verification.md §2).
"""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import quote

from gitive.constants import BODIES_REF_PREFIX, CHAIN_PROBLEMS, REMOTES_REF_PREFIX
from gitive.core.clock import now_ms
from gitive.index import bodies as body_tables
from gitive.index import decisions, scrub, sealed, unsealing
from gitive.index import entries as entry_rows
from gitive.index import lessons as lesson_tables
from gitive.index.db import TEAM_META, meta_get, meta_set
from gitive.index.problems import Report, clear_chain_problems, record_problem
from gitive.index.roster import recompute_roster
from gitive.store import maintenance, refs, verify
from gitive.store import repo as repos
from gitive.store.logs import claimed_seq

if TYPE_CHECKING:
    from nacl.signing import SigningKey

    from gitive.store.types import Repo

Progress = Callable[[int, int], None]
NOT_ADMITTED = "unknown-signer"  # the same kind doctor reports for entries of machines not on the roster


class Cursor(NamedTuple):
    tip: str
    seq: int
    refused: str | None  # the problem kind that refused this tip (None: read in full)
    retry_at: int | None  # read again from this time even if the tip did not move ("future")


class Work(NamedTuple):
    repo: Repo
    store: str
    ref: refs.LogRef
    tip: str
    cursor: Cursor | None

    @property
    def stop_at(self) -> str | None:
        """A tip refused for good before: a walk that reaches it has nothing more to read."""
        c = self.cursor
        return c.tip if c and c.refused in CHAIN_PROBLEMS and c.refused != "future" else None


class Checked(NamedTuple):
    rows: list[entry_rows.Row]
    problem: verify.Problem | None
    stopped: bool  # the walk reached a refused tip: the problem recorded then stands


def _known(conn: sqlite3.Connection, author: str, log: str) -> Callable[[str], int | None]:
    if not conn.execute("SELECT 1 FROM entries WHERE author = ? AND log = ? LIMIT 1", (author, log)).fetchone():
        return lambda oid: None  # nothing of this log yet: no lookup per commit

    def known(oid: str) -> int | None:
        row = conn.execute("SELECT seq FROM entries WHERE commit_id = ? AND author = ? AND log = ?",
                           (oid, author, log)).fetchone()
        return row[0] if row else None
    return known


def _check(repo: Repo, conn: sqlite3.Connection, team_id: str, ref: refs.LogRef, tip: str,
           stop_at: str | None, now: int) -> Checked:
    verified, _ = verify.verify_chain(repo, team_id, ref.name, ref.machine, ref.log, tip,
                                      _known(conn, ref.machine, ref.log), refused=stop_at, now=now)
    return Checked(entry_rows.rows_of(verified.entries, verified.signature_checked), verified.problem,
                   verified.stopped_at_refused)


def _check_job(job: tuple[str, str, str, refs.LogRef, str, str | None, int]) -> Checked:
    """The verification half of one ref, in a worker process (its own repository and read-only index)."""
    repo_path, db_path, team_id, ref, tip, stop_at, now = job
    conn = sqlite3.connect(f"file:{quote(db_path)}?mode=ro", uri=True, timeout=30)
    try:
        return _check(repos.open_at(repo_path), conn, team_id, ref, tip, stop_at, now)
    finally:
        conn.close()


def _set_cursor(conn: sqlite3.Connection, store: str, ref: str, tip: str, seq: int, refused: str | None,
                retry_at: int | None) -> None:
    conn.execute("INSERT INTO cursors(store, ref, tip, seq, refused, retry_at) VALUES (?,?,?,?,?,?) "
                 "ON CONFLICT(store, ref) DO UPDATE SET tip = excluded.tip, seq = excluded.seq, "
                 "refused = excluded.refused, retry_at = excluded.retry_at",
                 (store, ref, tip, seq, refused, retry_at))


def _ingest_ref(conn: sqlite3.Connection, work: Work, team_id: str, report: Report, now: int,
                checked: Checked | None = None) -> bool:
    """Ingest one log ref (verified here, or by a worker already); return true if it added roster entries."""
    ref, tip, cursor = work.ref, work.tip, work.cursor
    if checked is None:
        checked = _check(work.repo, conn, team_id, ref, tip, work.stop_at, now)
    rows, problem = checked.rows, checked.problem
    if not checked.stopped:
        clear_chain_problems(conn, ref.name)
    if problem:
        record_problem(conn, report, problem.kind, ref.name, problem.commit, ref.machine, ref.log, problem.seq,
                       problem.detail)
    conn.execute("INSERT OR IGNORE INTO logs VALUES (?, ?, 0, '', NULL)", (ref.machine, ref.log))
    added = entry_rows.insert(conn, report, work.repo, ref.name, rows) if rows else 0
    report.received += added
    tip_seq = _known(conn, ref.machine, ref.log)(tip) or 0
    if cursor and tip_seq and tip_seq < cursor.seq:
        record_problem(conn, report, "rollback", ref.name, tip, ref.machine, ref.log, tip_seq,
                       f"log went back from seq {cursor.seq} to {tip_seq}; entries already verified are kept")
    conn.execute(
        "UPDATE logs SET hwm = s.seq, head = s.commit_id FROM (SELECT seq, commit_id FROM entries "
        "WHERE author = ? AND log = ? ORDER BY seq DESC LIMIT 1) AS s WHERE author = ? AND log = ?",
        (ref.machine, ref.log, ref.machine, ref.log),
    )
    # A refused tip is remembered with its reason: the next read costs one comparison, until the tip moves,
    # the roster changes (unknown-signer) or the retry time of an entry stamped ahead passes.
    refused = problem.kind if problem else (cursor.refused if checked.stopped and cursor else None)
    retry_at = problem.retry_at if problem else None
    _set_cursor(conn, work.store, ref.name, tip, max(tip_seq, cursor.seq if cursor else 0), refused, retry_at)
    return added > 0 and ref.log == "roster"


def _refuse_unadmitted(conn: sqlite3.Connection, work: Work, report: Report) -> None:
    """Refuse by its tip a log of a machine the roster does not admit: no walk, nothing projected."""
    ref = work.ref
    clear_chain_problems(conn, ref.name)
    record_problem(conn, report, NOT_ADMITTED, ref.name, work.tip, ref.machine, ref.log, None,
                   f"log of {ref.machine[:12]}, a machine the roster does not admit; it is not read until "
                   "the roster admits that machine")
    _set_cursor(conn, work.store, ref.name, work.tip, work.cursor.seq if work.cursor else 0, NOT_ADMITTED, None)


def _pin(conn: sqlite3.Connection, repo: Repo, me: str | None) -> None:
    """Keep every peer log's verified head reachable locally, so a force-push upstream cannot erase it."""
    for author, log, head, hwm in conn.execute("SELECT author, log, head, hwm FROM logs WHERE head != ''").fetchall():
        if author == me or head not in repo:
            continue
        name = refs.pinned_ref(author, log)
        if refs.tip(repo, name) != head:
            refs.force_set(repo, name, head, "gitive: pin verified head")
            # The pin holds only what was just verified: record it as read, so the next ingest skips it.
            _set_cursor(conn, repo.path, name, head, hwm, None, None)


PARALLEL_FROM = 20_000  # entries to verify before a second process pays for its start-up


def _estimate(conn: sqlite3.Connection, work: list[Work]) -> int:
    """Roughly how many entries the work holds: the seq each tip's commit message claims minus what the index
    has of that log (a malformed tip is found, and reported, by the real walk)."""
    total = 0
    for w in work:
        seq = claimed_seq(w.repo, w.tip)
        if seq is None:
            continue
        have = conn.execute("SELECT hwm FROM logs WHERE author = ? AND log = ?",
                            (w.ref.machine, w.ref.log)).fetchone()
        total += max(0, seq - (have[0] if have else 0))
    return total


def _checked(conn: sqlite3.Connection, team_id: str, work: list[Work], now: int, estimate: int
             ) -> Iterator[tuple[Work, Checked | None]]:
    """Yield each piece of work with its verification done ahead in worker processes when there is a lot
    (``estimate`` entries: a fresh index, a rebuild, a first join): reading and checking entries is the floor
    of ingest, and pygit2 and PyNaCl hold the GIL, so only processes use a second core. Otherwise each ref is
    verified in turn by the caller."""
    workers = min(4, os.cpu_count() or 1)
    if workers < 2 or len(work) < 2 or estimate < PARALLEL_FROM:
        for item in work:
            yield item, None
        return
    db_path = conn.execute("PRAGMA database_list").fetchone()[2]
    jobs = [(w.repo.path, db_path, team_id, w.ref, w.tip, w.stop_at, now) for w in work]
    # spawn, not fork: the daemon calls this from a process with threads
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        yield from zip(work, pool.imap(_check_job, jobs, chunksize=1), strict=True)


def _cursors(conn: sqlite3.Connection, store: str) -> dict[str, Cursor]:
    rows = conn.execute("SELECT ref, tip, seq, refused, retry_at FROM cursors WHERE store = ?", (store,))
    return {r[0]: Cursor(*r[1:]) for r in rows}


def _due(cursor: Cursor | None, tip: str, now: int) -> bool:
    return cursor is None or cursor.tip != tip or (cursor.retry_at is not None and cursor.retry_at <= now)


def _admitted(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT machine FROM members")}


def _order(work: list[Work]) -> list[Work]:
    """Own and remote refs before pins, so a pin is read last and costs a comparison."""
    return sorted(work, key=lambda w: (w.ref.source in ("pinned", "fork"), w.ref.name))


def ingest(conn: sqlite3.Connection, stores: list[Repo], team_id: str, founder: str,
           me: str | None = None, progress: Progress | None = None, key: SigningKey | None = None) -> Report:
    """Verify and index everything new under the log refs of ``stores``, in one transaction.

    With this machine's ``key``, sealed entries and bodies it may read are opened too (``index.sealed``).
    """
    report = Report()
    now = now_ms()
    work: list[Work] = []
    parked: list[Work] = []  # refused as not admitted: read again if the roster now admits their machine
    moved_bodies: list[tuple[str, str, str]] = []
    for repo in stores:
        store = repo.path
        cursors = _cursors(conn, store)
        for name, tip in refs.tips(repo, "refs/").items():
            cursor = cursors.get(name)
            parsed = refs.parse_log_ref(name)
            if parsed:
                if _due(cursor, tip, now):
                    work.append(Work(repo, store, parsed, tip, cursor))
                elif cursor and cursor.refused == NOT_ADMITTED:
                    parked.append(Work(repo, store, parsed, tip, cursor))
            elif cursor and cursor.tip == tip:
                continue
            elif name.startswith(BODIES_REF_PREFIX) or (name.startswith(REMOTES_REF_PREFIX) and "/bodies/" in name):
                moved_bodies.append((store, name, tip))
    if not work and not moved_bodies and conn.execute("SELECT 1 FROM members LIMIT 1").fetchone() \
            and not decisions.ripe(conn, now):
        scrub.scrub_if_due(conn)  # one left by a checkpoint a reader blocked
        return report
    # a first sync or a rebuild: a page cache that holds the indexes being filled, for this transaction only
    with _big_cache(conn, len(work) > 1 and _estimate(conn, work) >= PARALLEL_FROM):
        conn.execute("BEGIN IMMEDIATE")
        try:
            if me is not None and meta_get(conn, sealed.READER) != me:
                meta_set(conn, sealed.READER, me)  # whose personal scope this index shows
            if meta_get(conn, TEAM_META) is None:  # the roster merge sets the same; decisions need it before
                meta_set(conn, TEAM_META, team_id)
            _ingest_all(conn, team_id, founder, work, parked, report, now, progress)
            # decisions dated ahead whose time has come now count: the lessons they decide are recomputed
            report.lessons_touched |= {decisions.about(s) for s in decisions.ripen(conn, now)
                                       if s.startswith(("review/", "tombstone/"))}
            keyring = sealed.Keyring(conn, key) if key is not None else None
            unsealing.open_waiting(conn, keyring, report)
            if report.lessons_touched or moved_bodies or report.roster_changed or report.quarantined:
                lesson_tables.after_ingest(conn, stores, report.lessons_touched - {""},
                                           report.roster_changed or report.quarantined, team_id=team_id,
                                           keyring=keyring)
            conn.executemany("INSERT INTO cursors(store, ref, tip, seq) VALUES (?,?,?,0) ON CONFLICT(store, ref) "
                             "DO UPDATE SET tip = excluded.tip", moved_bodies)
            for repo in stores:
                _pin(conn, repo, me)
            moved = None if scrub.due(conn) else {body_tables.body_ref_machine(name) or "" for _, name, _ in moved_bodies}
            purge = body_tables.drop_refused_copies(conn, stores, moved) if moved is None or moved else {}
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    for repo in stores:  # retracted bodies this machine fetched or pinned leave its disk now
        if purge.get(repo.path):
            maintenance.purge(repo, purge[repo.path])
    scrub.scrub_if_due(conn)  # a tombstone applied above: its text leaves the file's bytes too
    return report


def _ingest_all(conn: sqlite3.Connection, team_id: str, founder: str, work: list[Work], parked: list[Work],
                report: Report, now: int, progress: Progress | None) -> None:
    """Roster logs first, so the index knows who may sign before it reads (or refuses) anything else."""
    before = _admitted(conn)
    roster = _order([w for w in work if w.ref.log == "roster"])
    rest = [w for w in work if w.ref.log != "roster"]
    total, done = len(work), 0
    for w in roster:
        if _ingest_ref(conn, w, team_id, report, now):
            report.roster_changed = True
        done += 1
        if progress:
            progress(done, total)
    if report.roster_changed or not before:
        recompute_roster(conn, team_id, founder, report)
    admitted = _admitted(conn)
    if admitted != before:
        rest += [w for w in parked if w.ref.machine in admitted]
    readable = [w for w in rest if w.ref.machine in admitted]
    for w in rest:
        if w.ref.machine not in admitted:
            _refuse_unadmitted(conn, w, report)
            done += 1
    estimate = _estimate(conn, readable) if len(readable) > 1 else 0
    for w, checked in _checked(conn, team_id, _order(readable), now, estimate):
        _ingest_ref(conn, w, team_id, report, now, checked)
        done += 1
        if progress:
            progress(done, total)
    report.refs_read = len(roster) + len(readable)


BIG_CACHE_KIB = 128 * 1024


@contextmanager
def _big_cache(conn: sqlite3.Connection, big: bool) -> Iterator[None]:
    """A page cache that holds the index's B-trees while a large batch is inserted (SQLite's default 2 MiB
    would write and read back pages of every randomly keyed index for each few rows), given back after."""
    if not big:
        yield
        return
    (before,) = conn.execute("PRAGMA cache_size").fetchone()
    conn.execute(f"PRAGMA cache_size = {-BIG_CACHE_KIB}")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA cache_size = {int(before)}")
