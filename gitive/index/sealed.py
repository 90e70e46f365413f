"""Sealed scopes in the index: scope-key and sealed rows, the keys this machine can open, and opening records.

Every ``scope-key`` and ``sealed`` entry gets a row as it is inserted (``scope_keys``, ``sealed_entries``), whoever
can read it. A :class:`Keyring` works out, in memory only, which epoch keys this machine's key opens: the boxes
sealed to it, then every older key wrapped under one it holds. A sealed entry is opened once its epoch's key is
there: its plaintext must name the entry's own author and log and hold a sealable record of the entry's scope,
and a personal record must be by one of that person's machines. The record is then projected like a plain one
(under the sealed entry's author, log and seq, so admission and quarantine apply as usual), and its bodies
are found in the body store under their sealed names.

What is opened depends only on the entries the index holds and this machine's key, so an index kept up to date
step by step opens exactly what a rebuild on the same machine opens: a key that arrives later opens the entries
waiting for it, in whatever order they came.
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, Any

from gitive.constants import MAX_BODY_BYTES
from gitive.core import canonical, records, sealing
from gitive.core.ids import is_hex64
from gitive.errors import InvalidRecord
from gitive.index.db import meta_get
from gitive.index.problems import Report, record_problem
from gitive.store import refs
from gitive.store.logs import Entry

if TYPE_CHECKING:
    import pygit2
    from nacl.signing import SigningKey

KINDS = ("scope-key", "sealed")
SEALABLE = ("lesson", "review", "tombstone", "citation")
REFUSED = "sealed-refused"  # the problem kind of a sealed entry that opened to something no honest writer seals

# sealed_entries.state
NEW, OPEN, BAD, WAITING = 0, 1, 2, 3  # WAITING: tried, and this machine holds no key for its epoch (yet)


def record(conn: sqlite3.Connection, entry: Entry) -> None:
    """Give a newly inserted scope-key or sealed entry its row (nothing is opened here)."""
    body, rec = entry.body, entry.body["record"]
    key = (body["author"], body["log"], body["seq"])
    scope = canonical.dumps(body["scope"]).decode()
    if rec["type"] == "scope-key":
        conn.execute("INSERT OR IGNORE INTO scope_keys(author, log, seq, scope, epoch, recipients, wraps, at) "
                     "VALUES (?,?,?,?,?,?,?,?)",
                     (*key, scope, rec["epoch"], canonical.dumps(rec["recipients"]).decode(),
                      canonical.dumps(rec["wraps"]).decode(), body["at"]))
    else:
        conn.execute("INSERT OR IGNORE INTO sealed_entries(author, log, seq, commit_id, scope, epoch, state) "
                     "VALUES (?,?,?,?,?,?,?)", (*key, entry.commit, scope, rec["epoch"], NEW))


class Keyring:
    """The epoch keys ``machine_key`` opens, worked out from the index's scope-key rows when first asked (and
    again after :meth:`forget`). Keys live in this object only: the index stores what they opened, never them."""

    def __init__(self, conn: sqlite3.Connection, machine_key: SigningKey) -> None:
        from gitive.core.keys import machine_id

        self.conn = conn
        self.machine_key = machine_key
        self.me = machine_id(machine_key)
        self._keys: dict[str, bytes] | None = None

    def forget(self) -> None:
        self._keys = None

    def keys(self) -> dict[str, bytes]:
        if self._keys is None:
            self._keys = self._resolve()
        return self._keys

    def key(self, epoch: str) -> bytes | None:
        return self.keys().get(epoch)

    def _resolve(self) -> dict[str, bytes]:
        keys: dict[str, bytes] = {}
        path = f'$."{self.me}"'
        for epoch, box in self.conn.execute(
                "SELECT epoch, json_extract(recipients, ?) FROM scope_keys WHERE json_extract(recipients, ?) "
                "IS NOT NULL", (path, path)):
            if epoch not in keys and (found := sealing.open_key(self.machine_key, box, epoch)) is not None:
                keys[epoch] = found
        queue = list(keys)
        while queue:  # older epochs wrapped under a key we hold (any record of that epoch may wrap some)
            newer = queue.pop()
            for (wraps,) in self.conn.execute("SELECT wraps FROM scope_keys WHERE epoch = ?", (newer,)):
                for old, box in json.loads(wraps).items():
                    if old not in keys and (found := sealing.unwrap(keys[newer], box, old)) is not None:
                        keys[old] = found
                        queue.append(old)
        return keys


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
        rows = [r for batch in _chunks(epochs) for r in conn.execute(
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


def _chunks(items: list[str], size: int = 500) -> list[list[str]]:
    return [items[i:i + size] for i in range(0, len(items), size)]


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
    from gitive.index import lessons as lesson_tables  # it imports the body loader, which imports this module

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


READER = "reader"  # meta: the machine this index belongs to, whose person's personal scope it shows


def personal_counts(conn: sqlite3.Connection, author: str, person: str, reader: str | None = None) -> bool:
    """Whether a personal record of ``person`` by ``author`` counts in this index: written by one of that
    person's machines and read on one (``reader``, default the index's own machine; unknown: not checked)."""
    reader = reader or meta_get(conn, READER)
    persons = dict(conn.execute("SELECT machine, person FROM members WHERE machine IN (?, ?)",
                                (author, reader or author)).fetchall())
    return persons.get(author) == person and (reader is None or persons.get(reader) == person)


def inner_record(conn: sqlite3.Connection, author: str, log: str, seq: int) -> dict[str, Any] | None:
    """The opened record of a sealed entry (None if it is not open here)."""
    row = conn.execute(f"SELECT inner FROM sealed_entries WHERE author = ? AND log = ? AND seq = ? AND state = {OPEN}",
                       (author, log, seq)).fetchone()
    return json.loads(row[0]) if row else None


def wanted_by_names(conn: sqlite3.Connection, names: list[str]) -> set[tuple[str, str]]:
    """(body hash, lesson) of the sealed bodies stored under ``names`` that an opened record named."""
    out: set[tuple[str, str]] = set()
    for batch in _chunks(names):
        out.update(conn.execute(f"SELECT body_hash, lesson FROM sealed_bodies WHERE name IN "
                                f"({','.join('?' * len(batch))})", batch))
    return out


def unserved(conn: sqlite3.Connection, names: list[str]) -> set[str]:
    """Body hashes among those stored under ``names`` that no accepted snapshot serves any more (by any name)."""
    out: set[str] = set()
    for hash_, _ in wanted_by_names(conn, names):
        if not conn.execute("SELECT 1 FROM body_locations WHERE body_hash = ? UNION ALL SELECT 1 FROM sealed_bodies "
                            "s JOIN body_locations b ON b.body_hash = s.name AND b.machine = s.author "
                            "WHERE s.body_hash = ? LIMIT 1", (hash_, hash_)).fetchone():
            out.add(hash_)
    return out


def load_body(conn: sqlite3.Connection, repos: dict[str, pygit2.Repository], hash_: str, lesson: str,
              keyring: Keyring) -> bytes | None:
    """The plaintext of a sealed body ``hash_`` of ``lesson``, from its author's store (checked by the caller)."""
    for name, author, epoch in conn.execute("SELECT name, author, epoch FROM sealed_bodies WHERE body_hash = ? "
                                            "AND lesson = ?", (hash_, lesson)).fetchall():
        key = keyring.key(epoch)
        if key is None:
            continue
        for store, blob in conn.execute("SELECT store, blob FROM body_locations WHERE body_hash = ? AND machine = ?",
                                        (name, author)):
            repo = repos.get(store)
            try:
                obj = repo[blob] if repo is not None else None
            except (KeyError, ValueError):
                continue
            if obj is None or obj.type_str != "blob" or obj.size > MAX_BODY_BYTES:
                continue
            plain = sealing.open_body(key, obj.data)
            if plain is not None:
                return plain
    return None


def own_names(conn: sqlite3.Connection, me: str, pairs: list[tuple[str, str | None]]) -> list[tuple[str, str | None]]:
    """The sealed names, in this machine's own store, of the bodies ``pairs`` = (body hash, lesson or None)."""
    out = []
    for hash_, lesson in pairs:
        sql = "SELECT name, lesson FROM sealed_bodies WHERE body_hash = ? AND author = ?"
        args: tuple[str, ...] = (hash_, me)
        if lesson is not None:
            sql, args = sql + " AND lesson = ?", (*args, lesson)
        out += [(name, None) for name, _ in conn.execute(sql, args)]
    return out
