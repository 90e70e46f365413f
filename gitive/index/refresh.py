"""Bringing a hive's index up to date before a read: one ref comparison per log when nothing changed.

When every hive ref's tip (read from git's files) equals the index's cursor, nothing is ingested and neither
pygit2 nor PyNaCl is imported: a read command then costs the interpreter, the CLI and one SQLite query.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitive.core import notices
from gitive.core.clock import now_ms
from gitive.index import db, decisions, obligations, personal_migration
from gitive.index.catchup import me_or_none
from gitive.index.problems import Report
from gitive.store import gitdir
from gitive.team.hive import Hive

if TYPE_CHECKING:
    from gitive.index.ingest import Progress

_WATCHED = ("/logs/", "/bodies/")  # the refs whose tips ingest keeps a cursor for


@contextmanager
def fresh_index(hive: Hive, progress: Progress | None = None) -> Iterator[tuple[sqlite3.Connection, Report]]:
    """Open the hive's index, ingest anything new under its refs, and yield the connection and report.

    A personal store from before sealed scopes is moved into the team store first (``personal_migration``).
    """
    if not db.writable(hive.index_path):
        _say_read_only(hive)
        with db.connect(hive.index_path, readonly=True) as conn:
            yield conn, Report()
        return
    moving = personal_migration.before_open(hive)
    with db.connect(hive.index_path) as conn:
        if moving:
            personal_migration.finish(hive, conn)
        _cache_project_id(hive, conn)
        if _unchanged(conn, hive.store_dirs()):
            obligations.refresh(conn)  # its fingerprint query: a new index table still gets filled
            if notices.listening():  # standing notices are said on every command, not only after a change
                _say_remembered_notices(hive, conn)
            yield conn, Report()
            return
        from gitive.index import ingest

        me = me_or_none(hive)
        report = ingest.ingest(conn, hive.stores(), hive.team_id, hive.founder, me, progress,
                               key=hive.machine_key if me is not None else None)
        if me is not None:
            _standing(hive, conn, me)
        _cache_project_id(hive, conn, ingested=True)
        obligations.refresh(conn)  # a fingerprint query when nothing changed
        yield conn, report


def _say_read_only(hive: Hive) -> None:
    """Reads of a read-only ``.git`` show the index as last written: nothing new is ingested.

    Raises:
        GitiveError: there is no index to read yet.
    """
    from gitive.errors import GitiveError

    if not hive.index_path.exists():
        raise GitiveError(f"{hive.common_dir} is read-only and holds no gitive index yet; nothing was written")
    notices.emit(f"{hive.common_dir} is read-only: showing what gitive last read, without what was fetched since")


def _standing(hive: Hive, conn: sqlite3.Connection, me: str) -> None:
    """Mark the store when the roster shows this machine removed (writers then refuse), and say so."""
    from gitive.store import repo as repos
    from gitive.team.hive import KEY_REMOVED

    removed = conn.execute("SELECT 1 FROM members WHERE machine = ? AND active = 0", (me,)).fetchone() is not None
    if removed != bool(repos.config_get(hive.store, KEY_REMOVED)):
        if removed:
            repos.config_set(hive.store, KEY_REMOVED, "true")
        else:
            repos.config_unset(hive.store, KEY_REMOVED)
    _say_notices(conn, me)


_NOTICES_META = "standing_notices"  # {"keys": the key files' fingerprint, "lines": [...]} of the last ingest


def _say_notices(conn: sqlite3.Connection, me: str) -> None:
    """Say this machine's standing notices, and remember them for the next command's fast path."""
    from gitive.index import deciding

    lines = deciding.notices(conn, me, _local_key())
    with suppress(sqlite3.OperationalError):  # a read-only index: the next command works them out again
        db.meta_set(conn, _NOTICES_META, json.dumps({"keys": _keys_fingerprint(), "lines": lines}))
    if notices.listening():
        for line in lines:
            notices.emit(line)


def _say_remembered_notices(hive: Hive, conn: sqlite3.Connection) -> None:
    """The notices the last ingest worked out, without loading a key (so without PyNaCl) while this home's key
    files are the ones it saw; else worked out again."""
    stored = db.meta_get(conn, _NOTICES_META)
    remembered = json.loads(stored) if stored else None
    if remembered is not None and remembered.get("keys") == _keys_fingerprint():
        for line in remembered["lines"]:
            notices.emit(line)
    elif (me := me_or_none(hive)) is not None:
        _say_notices(conn, me)


def _keys_fingerprint() -> list[Any]:
    """Which machine and person key files this home has (path, size, mtime): a change means other notices."""
    from gitive.core.home import gitive_home

    out: list[Any] = []
    for name in ("machine.key", "person.key"):  # core.keys and core.personkey import PyNaCl: named here
        path = gitive_home() / name
        try:
            st = path.stat()
        except OSError:
            out.append([str(path), None])
            continue
        out.append([str(path), st.st_size, st.st_mtime_ns])
    return out


def _local_key() -> str | None:
    from gitive.core import personkey
    from gitive.errors import KeyFileError

    try:
        return personkey.load().public if personkey.exists() else None
    except KeyFileError:
        return None


def _unchanged(conn: sqlite3.Connection, store_dirs: list[Path]) -> bool:
    """True when the index has a roster and a cursor equal to the tip of every log and body ref of every store.

    Anything it cannot read for sure (a ref being written, a symbolic ref) answers False, and ingest looks.
    """
    if not conn.execute("SELECT 1 FROM members LIMIT 1").fetchone():
        return False
    if decisions.ripe(conn, now_ms()):  # a decision dated ahead whose time has come: ingest counts it
        return False
    by_store: dict[str, dict[str, str]] = {}
    for store, ref, tip in conn.execute("SELECT store, ref, tip FROM cursors"):
        by_store.setdefault(store, {})[ref] = tip
    cursors: dict[str, dict[str, str]] = {}
    for store, found in by_store.items():  # one realpath a store, not one a cursor (an idle tick reads hundreds)
        cursors.setdefault(os.path.realpath(store), {}).update(found)
    for store_dir in store_dirs:
        tips = gitdir.hive_tips(store_dir)
        if tips is None:
            return False
        mine = cursors.get(os.path.realpath(store_dir), {})
        for name, tip in tips.items():
            if any(part in name for part in _WATCHED) and mine.get(name) != tip:
                return False
    return True


def rebuild(hive: Hive, progress: Progress | None = None) -> Report:
    """Delete the index and recreate it from refs alone."""
    for suffix in ("", "-wal", "-shm"):
        hive.index_path.with_name(hive.index_path.name + suffix).unlink(missing_ok=True)
    with fresh_index(hive, progress) as (_, report):
        return report


def _cache_project_id(hive: Hive, conn: sqlite3.Connection, ingested: bool = False) -> None:
    """Leave the project id where hooks can read it without blake3 (``<common git dir>/gitive/project-id``).

    One file per repository, shared by its linked worktrees; worked out again when the repository's config (its
    remotes) changed since it was written, or after an ingest (a ``project-link`` may have arrived). The id is
    the remote's as an admin's links resolve it (index.project_links). When the remote moved and the id changed
    with it, the old id is kept in ``project-moved`` until a link joins them (``gitive project move``).
    """
    from gitive.index import project_links

    path = hive.common_dir / "gitive" / "project-id"
    mark = _links_mark(conn)
    try:
        remote_changed = path.stat().st_mtime_ns < (hive.common_dir / "config").stat().st_mtime_ns
    except OSError:
        remote_changed = True
    if not (remote_changed or ingested) and db.meta_get(conn, _LINKS_META) == mark:
        return
    from gitive.team.projects import project_id, project_label

    pid = project_links.resolve(conn, hive.team_id, project_id(hive.project))
    with suppress(sqlite3.OperationalError):  # a read-only index: worked out again next time
        db.meta_set(conn, _LINKS_META, mark)
    old = _read(path)
    if old == pid:
        with suppress(OSError):
            os.utime(path)  # fresh again against the config
        return
    moved = path.with_name("project-moved")
    if old and remote_changed and not moved.exists():  # the remote moved: remember what it was
        _write(moved, f"{old} {_read(path.with_name('project-label'))}")
    elif _read(moved).split(" ", 1)[0] == pid:
        moved.unlink(missing_ok=True)  # linked: the repository is its old project again
    _write(path.with_name("project-label"), project_label(hive.project))
    _write(path, pid)


_LINKS_META = "project_links_seen"


def _links_mark(conn: sqlite3.Connection) -> str:
    """What the project id was last worked out against: the link entries (a catch-up may add one unseen)."""
    row = conn.execute("SELECT count(*), max(rowid) FROM entries WHERE kind = 'project-link'").fetchone()
    return f"{row[0]}/{row[1]}"


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""


def _write(path: Path, text: str) -> None:
    with suppress(OSError):  # a read-only .git: the id is worked out again next time
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text + "\n")
        os.replace(tmp, path)
