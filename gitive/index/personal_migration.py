"""Moving a personal store from before sealed scopes into the team store, sealed (docs/scopes.md, "Migration").

Versions before 2026-12 kept personal lessons in a local repository that was never pushed:
``$GITIVE_HOME/personal.git`` for the first team, ``$GITIVE_HOME/personal/<team-id>.git`` for others
(``Hive.personal_dir``). Now they travel in the team store, sealed to the person's machines. The first command
that opens a hive's index with this machine's key moves them:

1. the old store is renamed ``<name>.migrating``, so no reader takes it for a live store any more;
2. an index that read the old store is deleted (a projection: it is rebuilt from refs), because the sealed
   copies sit in a log of the same name and would otherwise meet the old entries as an equivocation;
3. every verified entry of the old ``personal`` log is written again, sealed, to this machine's ``personal`` log
   in the team store, with its original time and its bodies; its plaintext names the old entry's hash
   (``migrated``), so a second run (after a crash, or from another process) skips what is there already;
4. the old store is renamed ``<name>.migrated`` and kept, untouched, as a backup.

Lesson ids stay the same (same author, scope and content), and so do reviews' gestures, so states, reviews and
citations read as before. This module's top level imports nothing heavy: it runs on every command's path.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from gitive.core import notices

if TYPE_CHECKING:
    from gitive.team.hive import Hive

MIGRATING = ".migrating"
MIGRATED = ".migrated"
_CHECKED = "personal-moved"  # beside the index: the old store whose rows this index is known not to hold


class Moved(NamedTuple):
    entries: int  # sealed copies written by this run
    skipped: int  # entries of kinds that are never sealed (kept in the backup only)
    backup: Path


def _paths(hive: Hive) -> tuple[Path, Path, Path]:
    """(old store, its name while moving, its name once moved) of this team, whichever of them exists now.

    ``Hive.personal_dir`` cannot say once the store is renamed (it picks between the two old paths by what
    exists), so the variants are looked for here: this team's own path first, then the first team's, if its
    config names this team."""
    from gitive.core.home import gitive_home
    from gitive.store import gitdir
    from gitive.team.hive import KEY_TEAM, PERSONAL_STORE

    home = gitive_home()
    for old in (home / "personal" / f"{hive.team_id}.git", home / PERSONAL_STORE):
        variants = (old, old.with_name(old.name + MIGRATING), old.with_name(old.name + MIGRATED))
        found = next((v for v in variants if v.exists()), None)
        if found is not None and (old.parent.name == "personal"
                                  or gitdir.read_config(found).get(KEY_TEAM.lower()) == hive.team_id):
            return variants
    old = hive.personal_dir
    return old, old.with_name(old.name + MIGRATING), old.with_name(old.name + MIGRATED)


def before_open(hive: Hive) -> bool:
    """Start the move if there is one to make, and drop an index that read the old store. Costs three ``stat``
    calls when there is nothing to do. Returns whether a move waits for :func:`finish`."""
    old, moving, moved = _paths(hive)
    if old.exists() and _writable(hive):
        with suppress(FileNotFoundError):  # another process renamed it first
            os.rename(old, moving)
    if not (moving.exists() or moved.exists()):
        return False
    _forget_old_rows(hive, old)
    return moving.exists()


def _writable(hive: Hive) -> bool:
    """Whether this machine can write sealed records for this team (a key file, and not removed); without
    loading the key, so a machine that cannot move its store still reads it in place at no cost."""
    from gitive.core.home import gitive_home

    return (gitive_home() / "machine.key").exists() and not hive.removed


def _forget_old_rows(hive: Hive, old: Path) -> None:
    """Delete this repository's index if it holds rows read from ``old`` (once per index and old store)."""
    marker = hive.index_path.with_name(_CHECKED)
    try:
        if marker.read_text() == str(old):
            return
    except OSError:
        pass
    if hive.index_path.exists() and _holds(hive.index_path, old):
        for suffix in ("", "-wal", "-shm"):
            hive.index_path.with_name(hive.index_path.name + suffix).unlink(missing_ok=True)
    hive.index_path.parent.mkdir(parents=True, exist_ok=True)
    marker.write_text(str(old))


def _holds(index: Path, old: Path) -> bool:
    want = os.path.realpath(old)
    conn = sqlite3.connect(index, timeout=30)
    try:
        stores = [r[0] for r in conn.execute("SELECT DISTINCT store FROM cursors")]
    except sqlite3.OperationalError:  # an index older than its cursors table: nothing of ours in it
        return False
    finally:
        conn.close()
    return any(os.path.realpath(s.rstrip("/")) == want for s in stores)


def finish(hive: Hive, conn: sqlite3.Connection) -> Moved | None:
    """Write the sealed copies of what the old store holds, then keep it as ``<name>.migrated``."""
    _, moving, moved = _paths(hive)
    if not moving.exists() or not _writable(hive):
        return None
    with open(moving / "gitive-migration.lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not moving.exists():
            return None  # another process finished while we waited
        written, skipped = _copy(hive, conn, moving)
        backup = moved if not moved.exists() else moved.with_name(f"{moved.name}-{os.getpid()}")
        os.rename(moving, backup)
    notices.emit(f"moved {written} personal record(s) into the team store, sealed to your own machines; "
                 f"the old store is kept at {backup}")
    return Moved(written, skipped, backup)


def _copy(hive: Hive, conn: sqlite3.Connection, store: Path) -> tuple[int, int]:
    from gitive.core.lessons import body_hash
    from gitive.errors import InvalidRecord
    from gitive.index.bodies import parse_body
    from gitive.index.catchup import catch_up
    from gitive.index.scopes import write
    from gitive.index.sealed import SEALABLE
    from gitive.store import bodies, refs, verify
    from gitive.store import repo as repos

    catch_up(hive, conn)
    done = {r[0] for r in conn.execute("SELECT migrated FROM sealed_entries WHERE author = ? AND migrated IS NOT "
                                       "NULL", (hive.me,))}
    repo = repos.open_at(store)
    ref = refs.log_ref(hive.me, "personal")
    tip = refs.tip(repo, ref)
    if tip is None:
        return 0, 0
    checked, _ = verify.verify_chain(repo, hive.team_id, ref, hive.me, "personal", tip, lambda oid: None)
    written = skipped = 0
    for entry in checked.entries:
        record = entry.body["record"]
        if record["type"] not in SEALABLE or "personal" not in entry.body["scope"]:
            skipped += 1
            continue
        if entry.hash in done:
            continue
        lesson = record.get("id") or record.get("about") or ""
        items = {}
        for digest in (record.get("body_hash"), record.get("edits")):
            data = bodies.get(repo, hive.me, digest) if isinstance(digest, str) else None
            try:
                if data is not None and body_hash(lesson, parse_body(data)) == digest:
                    items[digest] = data
            except InvalidRecord:
                pass  # not this lesson's body: the header moves without it, as it was
        write(hive, conn, hive.store, "personal", entry.body["scope"], record, items, migrated=entry.hash,
              at=entry.body["at"])
        written += 1
    catch_up(hive, conn)
    return written, skipped
