"""Opening sealed entries once this machine holds their epoch's key, and projecting the records they hold.

A sealed entry is opened once its epoch's key is there: its plaintext must name the entry's own author and log
and hold a sealable record of the entry's scope, and a personal record must be by one of that person's
machines. The record is then projected like a plain one, under the sealed entry's author, log and seq, so
admission and quarantine apply as usual (docs/scopes.md). Above ``sealed`` (rows and keys) and ``lessons``
(projection), which both stand below it.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from gitive.core import records, sealing
from gitive.core.ids import is_hex64
from gitive.errors import InvalidRecord
from gitive.index import lessons as lesson_tables
from gitive.index.problems import Report, record_problem
from gitive.index.sealed import BAD, NEW, OPEN, REFUSED, SEALABLE, WAITING, Keyring, chunks, personal_counts
from gitive.store import refs
from gitive.store.logs import Entry


def open_waiting(conn: sqlite3.Connection, keyring: Keyring | None, report: Report) -> None:
    """Open the sealed entries whose key this machine now holds: new ones, and, when new scope keys came, every
    one still waiting for a key."""
    if keyring is None:
        return
    columns = "author, log, seq, commit_id, scope, epoch"
    if conn.execute("SELECT 1 FROM scope_keys WHERE seen = 0 LIMIT 1").fetchone():
        keyring.forget()
        conn.execute("UPDATE scope_keys SET seen = 1 WHERE seen = 0")
        epochs = sorted(keyring.keys())
        rows = [r for batch in chunks(epochs) for r in conn.execute(
            f"SELECT {columns} FROM sealed_entries WHERE state IN ({NEW}, {WAITING}) "
            f"AND epoch IN ({','.join('?' * len(batch))})", batch)]
    else:
        rows = []
    rows += conn.execute(f"SELECT {columns} FROM sealed_entries WHERE state = {NEW}").fetchall()
    done: set[tuple[str, str, int]] = set()
    for author, log, seq, commit, scope, epoch in rows:
        if (author, log, seq) in done:
            continue
        done.add((author, log, seq))
        key = keyring.key(epoch)
        if key is None:
            conn.execute(f"UPDATE sealed_entries SET state = {WAITING} WHERE author = ? AND log = ? AND seq = ?",
                         (author, log, seq))
            continue
        _open(conn, report, key, author, log, seq, commit, json.loads(scope), keyring.me)


def _open(conn: sqlite3.Connection, report: Report, key: bytes, author: str, log: str, seq: int, commit: str,
          scope: dict[str, Any], reader: str) -> None:
    box, epoch, at = conn.execute("SELECT json_extract(envelope, '$.body.record.box'), json_extract(envelope, "
                                  "'$.body.record.epoch'), at FROM entries WHERE author = ? AND log = ? AND seq = ?",
                                  (author, log, seq)).fetchone()
    plain = sealing.open_record(key, box)
    why = "its box does not open with the key its epoch names" if plain is None else \
        _refusal(conn, plain, author, log, scope, reader)
    where = (author, log, seq)
    if why is not None:
        conn.execute(f"UPDATE sealed_entries SET state = {BAD} WHERE author = ? AND log = ? AND seq = ?", where)
        record_problem(conn, report, REFUSED, refs.log_ref(author, log), commit, author, log, seq,
                       f"sealed entry refused: {why}")
        return
    assert plain is not None
    inner = plain["record"]
    conn.execute(f"UPDATE sealed_entries SET state = {OPEN}, kind = ?, inner = ?, migrated = ? "
                 "WHERE author = ? AND log = ? AND seq = ?",
                 (inner["type"], json.dumps(inner), plain.get("migrated"), *where))
    body = {"author": author, "log": log, "seq": seq, "at": at, "scope": scope, "record": inner}
    lesson_tables.project_entry(conn, Entry(commit, None, {"body": body}))
    lesson = inner.get("id") or inner.get("about") or inner.get("lesson") or ""
    report.lessons_touched.add(lesson)
    for hash_ in (inner.get("body_hash"), inner.get("edits")):
        if isinstance(hash_, str):
            conn.execute("INSERT OR IGNORE INTO sealed_bodies VALUES (?,?,?,?,?)",
                         (sealing.body_name(key, hash_), hash_, lesson, author, epoch))


_PLAIN_KEYS = {"v", "author", "log", "record"}


def _refusal(conn: sqlite3.Connection, plain: dict[str, Any], author: str, log: str,
             scope: dict[str, Any], reader: str) -> str | None:
    """Why an opened plaintext is not a record of this entry, or None if it is."""
    if not _PLAIN_KEYS <= plain.keys() <= _PLAIN_KEYS | {"migrated"}:
        return "its plaintext is not {v, author, log, record}"
    if plain["v"] != sealing.SEALED_VERSION:
        return f"sealed format {plain['v']!r:.20} is not one this version reads (upgrade gitive)"
    if plain["author"] != author or plain["log"] != log:
        return "its plaintext names another author or log (a box copied from elsewhere)"
    if "migrated" in plain and not is_hex64(plain["migrated"]):
        return "its `migrated` is not an entry hash"
    try:
        kind = records.check_record(plain["record"])
    except InvalidRecord as exc:
        return str(exc)
    if kind not in SEALABLE:
        return f"a {kind} record is never sealed"
    if "team" in scope:
        return "team scope is never sealed"
    if kind == "review" and plain["record"].get("scope", scope) != scope:
        return "the review names another scope than its entry"
    person = scope.get("personal")
    if person is not None and not personal_counts(conn, author, person, reader):
        return f"a personal record of {person} counts only from and on {person}'s own machines"
    return None
