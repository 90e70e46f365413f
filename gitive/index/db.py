"""Opening the index database and migrating its schema in named steps."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

from gitive.core.clock import now_ms

WAL_KEEP_BYTES = 4 * 1024 * 1024

# Each step runs once, in order, and is recorded; later issues append steps, never edit old ones.
MIGRATIONS: list[tuple[str, str | Callable[[sqlite3.Connection], None]]] = [
    ("0001-entries", """
        CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE cursors(store TEXT NOT NULL, ref TEXT NOT NULL, tip TEXT NOT NULL, seq INTEGER NOT NULL,
                             PRIMARY KEY(store, ref));
        CREATE TABLE logs(author TEXT NOT NULL, log TEXT NOT NULL, hwm INTEGER NOT NULL, head TEXT NOT NULL,
                          quarantined_from INTEGER, PRIMARY KEY(author, log));
        CREATE TABLE entries(author TEXT NOT NULL, log TEXT NOT NULL, seq INTEGER NOT NULL,
                             commit_id TEXT NOT NULL UNIQUE, kind TEXT NOT NULL, at INTEGER NOT NULL,
                             scope TEXT NOT NULL, envelope TEXT NOT NULL, PRIMARY KEY(author, log, seq));
        CREATE INDEX entries_kind ON entries(kind, at);
        CREATE TABLE problems(kind TEXT NOT NULL, source TEXT NOT NULL, commit_id TEXT NOT NULL,
                              author TEXT, log TEXT, seq INTEGER, detail TEXT NOT NULL,
                              first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL,
                              PRIMARY KEY(kind, source, commit_id));
        CREATE TABLE members(machine TEXT PRIMARY KEY, person TEXT NOT NULL, name TEXT NOT NULL,
                             role TEXT NOT NULL, active INTEGER NOT NULL, emails TEXT NOT NULL,
                             ts INTEGER NOT NULL, via TEXT NOT NULL, depth INTEGER NOT NULL);
    """),
    ("0002-lessons", """
        CREATE TABLE lessons(id TEXT PRIMARY KEY, author TEXT NOT NULL, log TEXT NOT NULL, seq INTEGER NOT NULL,
                             scope_kind TEXT NOT NULL, scope_value TEXT NOT NULL, kind TEXT NOT NULL,
                             evidence TEXT NOT NULL, files TEXT NOT NULL, tags TEXT NOT NULL, supersedes TEXT,
                             body_hash TEXT NOT NULL, hearsay INTEGER NOT NULL, session TEXT, at INTEGER NOT NULL);
        CREATE INDEX lessons_supersedes ON lessons(supersedes);
        CREATE TABLE lesson_bodies(body_hash TEXT PRIMARY KEY, lesson TEXT NOT NULL, text TEXT NOT NULL,
                                   applicability TEXT NOT NULL, quote TEXT);
        CREATE TABLE reviews(author TEXT NOT NULL, log TEXT NOT NULL, seq INTEGER NOT NULL, about TEXT NOT NULL,
                             approver TEXT NOT NULL, approved INTEGER NOT NULL, note TEXT NOT NULL, edits TEXT,
                             scope TEXT, at INTEGER NOT NULL, PRIMARY KEY(author, log, seq));
        CREATE INDEX reviews_about ON reviews(about, at);
        CREATE TABLE tombstones(author TEXT NOT NULL, log TEXT NOT NULL, seq INTEGER NOT NULL,
                                lesson TEXT NOT NULL, reason TEXT NOT NULL, bodies TEXT NOT NULL,
                                at INTEGER NOT NULL, applied INTEGER NOT NULL DEFAULT 0,
                                PRIMARY KEY(author, log, seq));
        CREATE INDEX tombstones_lesson ON tombstones(lesson);
        CREATE TABLE refused_bodies(body_hash TEXT PRIMARY KEY, lesson TEXT NOT NULL);
        CREATE TABLE lesson_stats(lesson TEXT PRIMARY KEY, citations INTEGER NOT NULL DEFAULT 0,
                                  successes INTEGER NOT NULL DEFAULT 0);
        CREATE TABLE project_members(author TEXT NOT NULL, log TEXT NOT NULL, seq INTEGER NOT NULL,
                                     project TEXT NOT NULL, person TEXT NOT NULL, role TEXT NOT NULL,
                                     confirmed INTEGER NOT NULL, at INTEGER NOT NULL,
                                     PRIMARY KEY(author, log, seq));
        CREATE VIRTUAL TABLE lesson_fts USING fts5(lesson UNINDEXED, text, applicability, tags,
                                                   tokenize = 'porter unicode61')
    """),
    ("0003-lesson-state", """
        CREATE VIEW valid_reviews AS
            SELECT r.* FROM reviews r JOIN members m ON m.machine = r.author
            WHERE m.person = r.approver AND m.role != 'anchor' AND (m.active = 1 OR r.at < m.ts);
        CREATE VIEW visible_lessons AS
            SELECT l.* FROM lessons l JOIN members m ON m.machine = l.author
            JOIN logs g ON g.author = l.author AND g.log = l.log
            WHERE (m.active = 1 OR l.at < m.ts) AND (g.quarantined_from IS NULL OR l.seq < g.quarantined_from);
        CREATE TABLE lesson_status(lesson TEXT PRIMARY KEY, state TEXT NOT NULL, approver TEXT,
                                   reviewed_at INTEGER, superseded_by TEXT);
        CREATE INDEX lesson_status_state ON lesson_status(state)
    """),
    # The text shown for each lesson, beside its FTS row: hooks read it by key (FTS5 cannot look up its
    # UNINDEXED column without a scan), and refreshing a lesson deletes its FTS row by rowid.
    ("0004-lesson-text", """
        CREATE TABLE lesson_text(lesson TEXT PRIMARY KEY, fts_rowid INTEGER NOT NULL, text TEXT NOT NULL,
                                 applicability TEXT NOT NULL);
        INSERT INTO lesson_text SELECT c0, id, c1, c2 FROM lesson_fts_content
    """),
    # Cited files as indexed tables (search and the hook look them up instead of scanning every lesson),
    # lesson symptoms, and a search index that stores the text once (issues 9 and 13).
    ("0005-lesson-files", lambda conn: _lesson_search(conn)),
    # The body store in the index (docs/verification.md §5): each source ref of a body snapshot as last judged,
    # the newest accepted snapshot of each machine (pinned in git too), and where each body is, so a lookup
    # never walks refs or trees and catching up after a write costs only what the write changed.
    ("0006-body-store", """
        CREATE TABLE body_sources(store TEXT NOT NULL, ref TEXT NOT NULL, tip TEXT NOT NULL, machine TEXT NOT NULL,
                                  version INTEGER, refused TEXT, PRIMARY KEY(store, ref));
        CREATE TABLE body_pins(store TEXT NOT NULL, machine TEXT NOT NULL, commit_id TEXT NOT NULL,
                               tree TEXT NOT NULL, layout TEXT NOT NULL, version INTEGER NOT NULL,
                               PRIMARY KEY(store, machine));
        CREATE TABLE body_locations(body_hash TEXT NOT NULL, store TEXT NOT NULL, machine TEXT NOT NULL,
                                    blob TEXT NOT NULL, PRIMARY KEY(body_hash, store, machine)) WITHOUT ROWID;
        CREATE INDEX lessons_body_hash ON lessons(body_hash);
        CREATE INDEX reviews_edits ON reviews(edits) WHERE edits IS NOT NULL
    """),
    # Obligations and the anchor's firings and verdicts (gitive/index/obligations.py).
    ("0007-obligations", """
        CREATE TABLE obligations(id TEXT PRIMARY KEY, author TEXT NOT NULL, person TEXT NOT NULL,
                                 log TEXT NOT NULL, seq INTEGER NOT NULL, at INTEGER NOT NULL, owner TEXT NOT NULL,
                                 to_ TEXT, condition TEXT NOT NULL, action TEXT NOT NULL, deadline INTEGER,
                                 expires INTEGER NOT NULL, created INTEGER NOT NULL, source TEXT NOT NULL,
                                 files TEXT NOT NULL, project TEXT, actor TEXT NOT NULL, state TEXT NOT NULL,
                                 state_at INTEGER, state_by TEXT, problem TEXT);
        CREATE INDEX obligations_open ON obligations(state, expires);
        CREATE TABLE obligation_changes(author TEXT NOT NULL, log TEXT NOT NULL, seq INTEGER NOT NULL,
                                        obligation TEXT NOT NULL, state TEXT NOT NULL, person TEXT NOT NULL,
                                        actor TEXT NOT NULL, accepted INTEGER NOT NULL, reason TEXT,
                                        at INTEGER NOT NULL, PRIMARY KEY(author, log, seq));
        CREATE TABLE firings(obligation TEXT NOT NULL, reason TEXT NOT NULL, author TEXT NOT NULL,
                             seq INTEGER NOT NULL, item TEXT NOT NULL, due INTEGER NOT NULL, late INTEGER NOT NULL,
                             event TEXT NOT NULL, at INTEGER NOT NULL, PRIMARY KEY(obligation, reason));
        CREATE TABLE verdicts(obligation TEXT PRIMARY KEY, value TEXT NOT NULL, reason TEXT NOT NULL,
                              author TEXT NOT NULL, at INTEGER NOT NULL)
    """),
    # Entry format v2 (docs/verification.md §1-2): entries are identified by the hash of their bytes (rows
    # already there were each checked by their own signature), and a refused tip is remembered with why.
    ("0008-entry-hash", """
        ALTER TABLE entries ADD COLUMN hash TEXT NOT NULL DEFAULT '';
        UPDATE entries SET hash = blake3_hex(envelope);
        ALTER TABLE entries ADD COLUMN sig_checked INTEGER NOT NULL DEFAULT 1;
        ALTER TABLE cursors ADD COLUMN refused TEXT;
        ALTER TABLE cursors ADD COLUMN retry_at INTEGER
    """),
    # Authority (docs/verification.md §3, §4): an entry counts by its position in its author's log, never by
    # the time it claims (member_gaps; v1 removals keep the time rule in member_time_gaps); decisions count
    # only with a gesture by the right person's registered key, unless at or below the migration point
    # (gesture_exempt; machine '*' exempts everything in a v1 team not yet migrated). Citations become rows,
    # and lesson_stats is recounted from the admitted ones (index.lessons.refresh_stats) instead of counters
    # bumped when projected. Emptying `members` makes the next ingest recompute the roster, which fills the
    # new tables and recounts every lesson's stats.
    ("0009-authority", """
        CREATE TABLE member_gaps(machine TEXT NOT NULL, gap INTEGER NOT NULL, log TEXT NOT NULL,
                                 lo INTEGER NOT NULL, hi INTEGER, t_hi INTEGER, PRIMARY KEY(machine, gap, log));
        CREATE TABLE member_time_gaps(machine TEXT NOT NULL, gap INTEGER NOT NULL, t_lo INTEGER NOT NULL,
                                      t_hi INTEGER, PRIMARY KEY(machine, gap));
        CREATE TABLE person_keys(person TEXT NOT NULL, key TEXT NOT NULL, PRIMARY KEY(person, key));
        CREATE TABLE admins(person TEXT PRIMARY KEY, current INTEGER NOT NULL);
        CREATE TABLE gesture_exempt(machine TEXT NOT NULL, log TEXT NOT NULL, seq INTEGER NOT NULL,
                                    PRIMARY KEY(machine, log));
        CREATE TABLE gestures_pending(author TEXT NOT NULL, log TEXT NOT NULL, seq INTEGER NOT NULL,
                                      kind TEXT NOT NULL, PRIMARY KEY(author, log, seq));
        ALTER TABLE reviews ADD COLUMN gesture TEXT;
        ALTER TABLE tombstones ADD COLUMN gesture TEXT;
        ALTER TABLE project_members ADD COLUMN gesture TEXT;
        CREATE TABLE citations(author TEXT NOT NULL, log TEXT NOT NULL, seq INTEGER NOT NULL, lesson TEXT NOT NULL,
                               session TEXT NOT NULL, success INTEGER NOT NULL, at INTEGER NOT NULL,
                               PRIMARY KEY(author, log, seq));
        CREATE INDEX citations_lesson ON citations(lesson);
        INSERT OR IGNORE INTO citations
            SELECT author, log, seq, json_extract(envelope, '$.body.record.lesson'),
                   json_extract(envelope, '$.body.record.session'),
                   json_extract(envelope, '$.body.record.success'), at
            FROM entries WHERE kind = 'citation';
        DROP TABLE lesson_stats;
        CREATE VIEW admitted_entries AS
            SELECT e.* FROM entries e
            WHERE EXISTS (SELECT 1 FROM members m WHERE m.machine = e.author)
              AND NOT EXISTS (SELECT 1 FROM logs l WHERE l.author = e.author AND l.log = e.log
                              AND l.quarantined_from <= e.seq)
              AND NOT EXISTS (SELECT 1 FROM member_gaps g WHERE g.machine = e.author
                              AND (g.log = e.log OR (g.log = '*' AND NOT EXISTS (
                                   SELECT 1 FROM member_gaps n WHERE n.machine = g.machine AND n.gap = g.gap
                                   AND n.log = e.log)))
                              AND e.seq > g.lo AND (g.hi IS NULL OR e.seq <= g.hi)
                              AND (g.t_hi IS NULL OR e.at < g.t_hi))
              AND NOT EXISTS (SELECT 1 FROM member_time_gaps t WHERE t.machine = e.author AND e.at >= t.t_lo
                              AND (t.t_hi IS NULL OR e.at < t.t_hi));
        DROP VIEW valid_reviews;
        CREATE VIEW valid_reviews AS
            SELECT r.* FROM reviews r
            JOIN admitted_entries a ON a.author = r.author AND a.log = r.log AND a.seq = r.seq
            JOIN members m ON m.machine = r.author
            WHERE m.person = r.approver AND m.role != 'anchor'
              AND (r.gesture IN (SELECT k.key FROM person_keys k WHERE k.person = r.approver)
                   OR EXISTS (SELECT 1 FROM gesture_exempt x WHERE (x.machine = '*' OR (x.machine = r.author
                              AND x.log = r.log)) AND r.seq <= x.seq));
        CREATE VIEW valid_tombstones AS
            SELECT t.*, m.person AS person FROM tombstones t
            JOIN admitted_entries a ON a.author = t.author AND a.log = t.log AND a.seq = t.seq
            JOIN members m ON m.machine = t.author
            WHERE m.role != 'anchor'
              AND (t.gesture IN (SELECT k.key FROM person_keys k WHERE k.person = m.person)
                   OR EXISTS (SELECT 1 FROM gesture_exempt x WHERE (x.machine = '*' OR (x.machine = t.author
                              AND x.log = t.log)) AND t.seq <= x.seq));
        CREATE VIEW valid_project_members AS
            SELECT p.*, m.person AS signer,
                   (m.role != 'anchor' AND p.gesture IN (SELECT k.key FROM person_keys k WHERE k.person = m.person))
                       AS decides,
                   (m.role != 'anchor' AND EXISTS (SELECT 1 FROM gesture_exempt x WHERE (x.machine = '*'
                       OR (x.machine = p.author AND x.log = p.log)) AND p.seq <= x.seq)) AS exempt
            FROM project_members p
            JOIN admitted_entries a ON a.author = p.author AND a.log = p.log AND a.seq = p.seq
            JOIN members m ON m.machine = p.author;
        DROP VIEW visible_lessons;
        CREATE VIEW visible_lessons AS
            SELECT l.* FROM lessons l
            JOIN admitted_entries a ON a.author = l.author AND a.log = l.log AND a.seq = l.seq;
        CREATE TABLE lesson_stats(lesson TEXT PRIMARY KEY, citations INTEGER NOT NULL, successes INTEGER NOT NULL);
        DELETE FROM members
    """),
    # A smaller index (issue 9 item 7): an entry row keeps only its record of the envelope (the signed bytes
    # stay in its commit; roster entries keep everything), and the search index keeps neither the text, which
    # lesson_bodies holds, nor per-row sizes, so BM25 reads no extra row per match (index.lesson_text).
    ("0010-compact-index", lambda conn: _compact_index(conn)),
    # Sealed scopes (docs/scopes.md, gitive/index/sealed.py): every scope-key entry (its recipients and wraps are
    # public), every sealed entry and whether this machine opened it (the opened record beside it), and where
    # the sealed bodies that opened records name are stored. Logs refused as malformed are read again: a
    # version that did not know the sealed kinds refused their entries as malformed.
    ("0011-sealed", """
        CREATE TABLE scope_keys(author TEXT NOT NULL, log TEXT NOT NULL, seq INTEGER NOT NULL, scope TEXT NOT NULL,
                                epoch TEXT NOT NULL, recipients TEXT NOT NULL, wraps TEXT NOT NULL, at INTEGER NOT NULL,
                                seen INTEGER NOT NULL DEFAULT 0, PRIMARY KEY(author, log, seq));
        CREATE INDEX scope_keys_epoch ON scope_keys(epoch);
        CREATE INDEX scope_keys_unseen ON scope_keys(seen) WHERE seen = 0;
        CREATE TABLE sealed_entries(author TEXT NOT NULL, log TEXT NOT NULL, seq INTEGER NOT NULL,
                                    commit_id TEXT NOT NULL, scope TEXT NOT NULL, epoch TEXT NOT NULL,
                                    state INTEGER NOT NULL, kind TEXT, inner TEXT, migrated TEXT,
                                    PRIMARY KEY(author, log, seq));
        CREATE INDEX sealed_entries_state ON sealed_entries(state, epoch);
        CREATE TABLE sealed_bodies(name TEXT NOT NULL, body_hash TEXT NOT NULL, lesson TEXT NOT NULL,
                                   author TEXT NOT NULL, epoch TEXT NOT NULL,
                                   PRIMARY KEY(name, body_hash, lesson)) WITHOUT ROWID;
        CREATE INDEX sealed_bodies_hash ON sealed_bodies(body_hash);
        DELETE FROM cursors WHERE refused = 'malformed'
    """),
    # Decisions that cannot be replayed (issue 23, gitive/index/decisions.py): a gestured decision counts once,
    # at its first appearance, and not before its signed time; reviews, retractions and project grants are read
    # through views that drop the other copies. Lesson states are recomputed, since a replay may have won.
    ("0012-decisions", lambda conn: _decisions(conn)),
    # A copy of a decision at or past an equivocation's quarantine counts nowhere and makes no other copy a replay
    # (gitive/index/decisions.py): an index that counted such copies equals a rebuild again.
    ("0013-quarantined-decisions", lambda conn: _quarantined_decisions(conn)),
]


_LESSON_SEARCH = (
    """CREATE TABLE paths(id INTEGER PRIMARY KEY, path TEXT NOT NULL UNIQUE, dir TEXT NOT NULL, name TEXT NOT NULL,
                          lessons INTEGER NOT NULL)""",
    "CREATE INDEX paths_dir ON paths(dir)",
    "CREATE INDEX paths_name ON paths(name)",
    """CREATE TABLE lesson_files(path INTEGER NOT NULL, lesson INTEGER NOT NULL, via INTEGER NOT NULL,
                                 PRIMARY KEY(path, lesson)) WITHOUT ROWID""",
    "CREATE INDEX lesson_files_lesson ON lesson_files(lesson)",
    "CREATE INDEX lessons_scope_at ON lessons(scope_kind, scope_value, at)",
    "CREATE INDEX lessons_kind_at ON lessons(scope_kind, at)",
    "ALTER TABLE lesson_bodies ADD COLUMN symptoms TEXT",
    "DROP TABLE lesson_text",
    "DROP TABLE lesson_fts",
    """CREATE VIRTUAL TABLE lesson_fts USING fts5(text, applicability, tags, symptoms, paths,
                                                 tokenize = 'porter unicode61')""",
    # Rowids only grow (AUTOINCREMENT), so "rows past N" is exactly what was indexed since N.
    """CREATE TABLE lesson_text(fts_rowid INTEGER PRIMARY KEY AUTOINCREMENT, lesson TEXT NOT NULL UNIQUE,
                                body_hash TEXT NOT NULL, digest TEXT NOT NULL)""",
    """CREATE TABLE lesson_vectors(fts_rowid INTEGER NOT NULL, model TEXT NOT NULL, vector BLOB NOT NULL,
                                   PRIMARY KEY(fts_rowid, model)) WITHOUT ROWID""",
)


def _lesson_search(conn: sqlite3.Connection) -> None:
    from gitive.index import lesson_files, lesson_text

    for statement in _LESSON_SEARCH:
        conn.execute(statement)
    for lesson, evidence in conn.execute("SELECT id, evidence FROM lessons").fetchall():
        lesson_files.add(conn, lesson, lesson_files.cited(json.loads(evidence)))
    lesson_text.reindex_all(conn)


def _compact_index(conn: sqlite3.Connection) -> None:
    from gitive.index import envelopes, lesson_text

    conn.create_function("gitive_stored_envelope", 2, envelopes.stored_envelope_text, deterministic=True)
    conn.execute("UPDATE entries SET envelope = gitive_stored_envelope(log, envelope)")
    lesson_text.make_contentless(conn)
    for table in ("lesson_status", "lesson_bodies"):
        _without_rowid(conn, table)


def _without_rowid(conn: sqlite3.Connection, table: str) -> None:
    """Rebuild ``table`` (keyed by a text primary key nothing reads its rowid for) as a WITHOUT ROWID table,
    so its key is stored once instead of again in an index; whatever columns later steps added come along."""
    (sql,) = conn.execute("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?", (table,)).fetchone()
    if re.search(r"\)\s*WITHOUT\s+ROWID\s*$", sql, re.IGNORECASE):
        return
    indexes = [row[0] for row in conn.execute("SELECT sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? "
                                              "AND sql IS NOT NULL", (table,))]
    columns = sql[sql.index("("):]  # after CREATE TABLE <name>, however the name is quoted
    conn.execute(f"CREATE TABLE {table}_v2{columns} WITHOUT ROWID")
    conn.execute(f"INSERT INTO {table}_v2 SELECT * FROM {table}")
    conn.execute(f"DROP TABLE {table}")
    conn.execute(f"ALTER TABLE {table}_v2 RENAME TO {table}")
    for index in indexes:
        conn.execute(index)


_DECISION_VIEWS = """
    DROP VIEW valid_reviews;
    CREATE VIEW valid_reviews AS
        SELECT r.* FROM reviews r
        JOIN admitted_entries a ON a.author = r.author AND a.log = r.log AND a.seq = r.seq
        JOIN members m ON m.machine = r.author
        WHERE m.person = r.approver AND m.role != 'anchor' AND {reviews}
          AND (r.gesture IN (SELECT k.key FROM person_keys k WHERE k.person = r.approver)
               OR EXISTS (SELECT 1 FROM gesture_exempt x WHERE (x.machine = '*' OR (x.machine = r.author
                          AND x.log = r.log)) AND r.seq <= x.seq));
    DROP VIEW valid_tombstones;
    CREATE VIEW valid_tombstones AS
        SELECT t.*, m.person AS person FROM tombstones t
        JOIN admitted_entries a ON a.author = t.author AND a.log = t.log AND a.seq = t.seq
        JOIN members m ON m.machine = t.author
        WHERE m.role != 'anchor' AND {tombstones}
          AND (t.gesture IN (SELECT k.key FROM person_keys k WHERE k.person = m.person)
               OR EXISTS (SELECT 1 FROM gesture_exempt x WHERE (x.machine = '*' OR (x.machine = t.author
                          AND x.log = t.log)) AND t.seq <= x.seq));
    DROP VIEW valid_project_members;
    CREATE VIEW valid_project_members AS
        SELECT p.*, m.person AS signer,
               (m.role != 'anchor' AND p.gesture IN (SELECT k.key FROM person_keys k WHERE k.person = m.person))
                   AS decides,
               (m.role != 'anchor' AND EXISTS (SELECT 1 FROM gesture_exempt x WHERE (x.machine = '*'
                   OR (x.machine = p.author AND x.log = p.log)) AND p.seq <= x.seq)) AS exempt
        FROM project_members p
        JOIN admitted_entries a ON a.author = p.author AND a.log = p.log AND a.seq = p.seq
        JOIN members m ON m.machine = p.author
        WHERE {project_members}
"""


def _quarantined_decisions(conn: sqlite3.Connection) -> None:
    from gitive.index import decisions, lesson_state

    decisions.recount_quarantined(conn)
    if conn.execute("SELECT 1 FROM members LIMIT 1").fetchone():
        lesson_state.recompute_status(conn)


def _decisions(conn: sqlite3.Connection) -> None:
    from gitive.index import decisions, lesson_state

    decisions.migrate(conn)
    views = _DECISION_VIEWS.format(reviews=decisions.UNCOUNTED.format(t="r"),
                                   tombstones=decisions.UNCOUNTED.format(t="t"),
                                   project_members=decisions.UNCOUNTED.format(t="p"))
    for statement in views.split(";"):
        if statement.strip():
            conn.execute(statement)
    if conn.execute("SELECT 1 FROM members LIMIT 1").fetchone():
        lesson_state.recompute_status(conn)


def _blake3_hex(text: str) -> str:
    import blake3

    return blake3.blake3(text.encode()).hexdigest()


def _migrate(conn: sqlite3.Connection, steps: list[tuple[str, str | Callable[[sqlite3.Connection], None]]]) -> None:
    conn.create_function("blake3_hex", 1, _blake3_hex, deterministic=True)
    conn.execute("CREATE TABLE IF NOT EXISTS migrations(name TEXT PRIMARY KEY, at INTEGER NOT NULL)")
    done = {row[0] for row in conn.execute("SELECT name FROM migrations")}
    for name, script in steps:
        if name in done:
            continue
        with conn:
            conn.execute("BEGIN IMMEDIATE")
            # Another process may have migrated between our read and the lock: check again.
            if conn.execute("SELECT 1 FROM migrations WHERE name = ?", (name,)).fetchone():
                continue
            if callable(script):  # a step that needs more than SQL (re-indexing text, say)
                script(conn)
            else:
                for statement in script.split(";"):
                    if statement.strip():
                        conn.execute(statement)
            conn.execute("INSERT INTO migrations VALUES (?, ?)", (name, now_ms()))


def writable(path: Path) -> bool:
    """Whether the index at ``path`` can be written here: its folder (or the nearest that exists) accepts
    writes. False on a read-only mount or a ``.git`` this user may only read."""
    import os

    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    return os.access(folder, os.W_OK) and (not path.exists() or os.access(path, os.W_OK))


@contextmanager
def connect(path: Path, *, readonly: bool = False, steps: list[tuple[str, Any]] | None = None
            ) -> Iterator[sqlite3.Connection]:
    """A connection that commits on success, rolls back on error, and always closes.

    ``steps`` are the named schema steps of another database kept the same way (default: the index's).
    """
    if readonly:
        # A folder nobody may write to (a read-only mount): no -shm can be made, so the file is read as it is
        mode = "mode=ro" if writable(path) else "mode=ro&immutable=1"
        conn = sqlite3.connect(f"file:{quote(str(path))}?{mode}", uri=True, timeout=5, isolation_level=None)
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, timeout=30, isolation_level=None)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        # A checkpoint leaves the WAL file at its largest size unless told otherwise: after a big ingest that
        # would double the index on disk for good.
        conn.execute(f"PRAGMA journal_size_limit = {WAL_KEEP_BYTES}")
        # Deleted rows are overwritten with zeros, so retracted text leaves the file's pages (index.scrub).
        conn.execute("PRAGMA secure_delete = ON")
        _migrate(conn, MIGRATIONS if steps is None else steps)
    try:
        yield conn
    finally:
        conn.close()


TEAM_META = "team_id"  # set by ingest and the roster merge: the team gestures are bound to (index.decisions reads it by name)


def meta_get(conn: sqlite3.Connection, key: str) -> str | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def meta_set(conn: sqlite3.Connection, key: str, value: str) -> None:
    conn.execute("INSERT INTO meta VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                 (key, value))
