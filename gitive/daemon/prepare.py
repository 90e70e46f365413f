"""The daemon's half of the hot path: it prepares what each live session's next hook call carries.

For every live session it keeps the session's spool (``gitive.capture.spool``) holding, one file each, the
messages and notices due for it (screened, framed, a message over the harness's cap one part at a time), and
for every repository it serves the session card and each cited file's lessons. When a hook says a prompt
arrived (or a command failed), ``gitive.daemon.ranking`` ranks the lessons for it at once and leaves the
picks in the spool. What
hooks deliver comes back through ``done/`` and is marked delivered here (acks are signed before the next
sync); what a hook that died had claimed is put back at once. A hook then only reads and renames files.

All of this runs beside the hooks, never on their path: a slow sync or a stopped daemon costs a hook nothing
(items already spooled still go; cards and file matches are trusted only while the heartbeat is fresh).
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path
from typing import Any

from gitive.capture import deliveries, events, locate, matching, prepared, spool
from gitive.capture.adapters import ADAPTERS
from gitive.core.clock import now_ms
from gitive.daemon import mailbox

ROOM = 256 * 1024  # bytes of items kept ready per session (the hook takes what fits its reply)
LIVE_MS = 30 * 60_000

_signatures: dict[str, str] = {}  # repository -> what its file matches were prepared from
_repo_lock = threading.Lock()
_spool_lock = threading.Lock()


# --- sessions' spools ---------------------------------------------------------------------------------------


def spool_all(db: sqlite3.Connection, now: int | None = None) -> int:
    """One pass over every live session this daemon named: take back, book deliveries, hand out. Returns
    how many items were handed out."""
    now = now if now is not None else now_ms()
    rows = db.execute("SELECT harness, session_id, name, last_seen FROM sessions WHERE last_seen > ?",
                      (now - LIVE_MS,)).fetchall()
    return sum(spool_session(db, harness, sid, name, last_seen, now) for harness, sid, name, last_seen in rows)


def spool_one(db: sqlite3.Connection, harness: str, session: str, read: bool = False) -> int:
    """The pass for one session (a hook just delivered from its spool; ``read``: the session took another
    turn since its last delivery, so what was delivered before has been read)."""
    row = db.execute("SELECT name, last_seen FROM sessions WHERE key = ?", (f"{harness}:{session}",)).fetchone()
    if row is None:
        return 0
    return spool_session(db, harness, session, row[0], now_ms() if read else row[1])


def spool_session(db: sqlite3.Connection, harness: str, session: str, name: str, last_seen: int,
                  now: int | None = None) -> int:
    """Take back what dead hooks held, book what hooks delivered, hand out what is due (in that order, and
    one pass at a time in this process, so a delivery being booked is never handed out again)."""
    with _spool_lock:
        return _spool_session(db, harness, session, name, last_seen)


def _spool_session(db: sqlite3.Connection, harness: str, session: str, name: str, last_seen: int) -> int:
    sdir = spool.session_dir(harness, session)
    taken = spool.reclaim(sdir)
    if taken:
        book = deliveries.Book(harness, session, None, "daemon")
        book.reclaimed(taken)
        book.flush()
    _mark_read(db, name, last_seen)  # before booking: what is delivered now has not been read yet
    _book_done(db, harness, session, name, sdir)
    adapter = ADAPTERS.get(harness)
    cap = adapter.cap if adapter else mailbox.DEFAULT_CAP
    handed = 0
    for item in mailbox.due_items(db, name, cap):  # already in the spool (waiting, claimed): skipped by name
        handed += spool.put(sdir, item)
    return handed


def _book_done(db: sqlite3.Connection, harness: str, session: str, name: str, sdir: Path) -> None:
    """Mark delivered what hooks acknowledged (a part moves its message on to the next part)."""
    for path, item in spool.collect_done(sdir):
        if item.get("kind") in ("message", "notice"):
            _book(db, harness, session, name, item)
        path.unlink(missing_ok=True)


def _book(db: sqlite3.Connection, harness: str, session: str, name: str, item: dict[str, Any]) -> None:
    done = mailbox.confirm(None, db, [item["id"]], name, "delivered")
    if item.get("kind") != "message":
        return
    for piece in done:
        part = mailbox.part_of(piece)
        delivery = {"tier": "turn", "part": f"{part[1]}/{part[2]}"} if part else {"tier": "turn"}
        events.append(events.make("team.message.injected", harness=harness, session=session,
                                  message={"id": part[0] if part else piece}, delivery=delivery))


def _mark_read(db: sqlite3.Connection, name: str, last_seen: int) -> None:
    """The session took another turn since a delivery: what was delivered has been read."""
    read = [r[0] for r in db.execute("SELECT id FROM inbox WHERE to_session = ? AND state = 'delivered' AND "
                                     "delivered_at < ?", (name, last_seen))]
    if read:
        mailbox.confirm(None, db, read, name, "read")


# --- per repository: the card and the file matches ------------------------------------------------------------


def prepare_repo(toplevel: str | Path) -> bool:
    """Write the repository's card (always: it is cheap and follows the files in play) and, when its
    lessons changed, its file matches. False when it has no index yet."""
    found = locate.find(str(toplevel))
    conn = matching.connect(locate.index_path(found)) if found else None
    if conn is None or found is None:
        return False
    with _repo_lock:
        try:
            _write_repo(conn, found)
        except sqlite3.Error:
            return False
        finally:
            conn.close()
    return True


def _write_repo(conn: sqlite3.Connection, found: locate.Located) -> None:
    project = locate.project_id(found)
    folder = spool.repo_dir(found.toplevel)
    files = prepared.recent_files(None, str(found.toplevel))
    spool.write_json(folder / "card.json", {"made": now_ms(), "project": project,
                                            "lessons": prepared.card(conn, files, project, prepared.CARD_KEEP),
                                            "owed": prepared.owed_block(conn, files)})
    signature = _signature(conn)
    if _signatures.get(str(found.toplevel)) == signature and (folder / "files" / "meta.json").exists():
        return
    _warm_recall(found)  # before meta.json: once the file matches are complete, so is prompt-time recall
    table, complete = prepared.file_table(conn, project)
    buckets: dict[str, dict[str, Any]] = {f"{b:02x}": {} for b in range(spool.BUCKETS)}
    for path, hits in table.items():
        buckets[spool.bucket_of(path)][path] = hits
    for bucket, paths in buckets.items():
        spool.write_json(folder / "files" / f"{bucket}.json", paths, if_changed=True)
    spool.write_json(folder / "files" / "meta.json", {"complete": complete, "made": now_ms(), "files": len(table)})
    _signatures[str(found.toplevel)] = signature


def _warm_recall(found: locate.Located) -> None:
    """Load the dense recall model and store the vectors of lessons added since the last time, so that
    ranking a prompt (op ``prepare``) is one matrix product. Loaded lazily by the first prompt instead, the
    model took 1.6 s of wall time on a loaded machine, and the hook waiting for the ranking gave up at 1 s."""
    from gitive.index import db as index_db
    from gitive.lessons import semantic

    backend = semantic.for_repo(None)  # the backend prompt_recall.best uses (no repository config read)
    if backend is None or backend.model() is None:
        return
    try:
        with index_db.connect(locate.index_path(found)) as conn:
            semantic.update(conn, backend, backend.key)
            backend.rankings(conn, ["warm"], 1)  # the matrix read into memory, numpy's product paths loaded
    except sqlite3.Error:
        return  # the index is busy: the ranking embeds what is missing, as search does


def _signature(conn: sqlite3.Connection) -> str:
    """What the file matches depend on: the lessons' states, cited files and texts."""
    from hashlib import blake2b

    digest = blake2b(digest_size=16)
    for row in conn.execute("SELECT s.lesson, s.state, t.body_hash FROM lesson_status s LEFT JOIN lesson_text t "
                            "ON t.lesson = s.lesson ORDER BY s.lesson"):
        digest.update(repr(row).encode())
    digest.update(repr(conn.execute("SELECT count(*), total(lesson), total(path) FROM lesson_files").fetchone()
                       ).encode())
    return digest.hexdigest()
