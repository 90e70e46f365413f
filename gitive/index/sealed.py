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
from gitive.core import canonical, sealing
from gitive.index.db import meta_get
from gitive.store import objects
from gitive.store.logs import Entry

if TYPE_CHECKING:
    from nacl.signing import SigningKey

    from gitive.store.types import Repo

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
    for batch in chunks(names):
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


def load_body(conn: sqlite3.Connection, repos: dict[str, Repo], hash_: str, lesson: str,
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
            data = objects.blob_data(repo, blob, MAX_BODY_BYTES) if repo is not None else None
            if data is None:
                continue
            plain = sealing.open_body(key, data)
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


def chunks(items: list[str], size: int = 500) -> list[list[str]]:
    return [items[i:i + size] for i in range(0, len(items), size)]
