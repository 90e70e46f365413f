"""Writing to a sealed scope: who may read it now, which epoch a new record is sealed with, and re-sealing.

The *audience* of a sealed scope is worked out from the roster every time: a person's scope is read by that
person's active machines; a sealed project scope by every active machine on the roster. A record is sealed with
an epoch whose recipients are exactly the audience, whose key this machine holds, and whose key no machine
outside the audience can reach (through a newer epoch that wraps it). When there is none (a machine joined or
was removed since), the writer starts a new epoch: its key sealed to each machine of the
audience, the keys of the epochs it held before wrapped under it. So a removed machine never gets the key of
anything written after its removal, and a new one opens the whole history through the wraps.

A new machine should not wait for the next write to read the history: at each sync, a machine that holds a key
some machine of the audience cannot reach starts a new epoch for it (:func:`reseal`). Holders take turns by
machine id, a few minutes apart, so a team does not answer one join with one epoch per machine.

Only epochs written by a machine that may (a machine of that person; for a project, any member) and admitted
at their position count for writers; readers open whatever key they hold (docs/scopes.md).
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, Any, NamedTuple

from gitive.core import canonical, records, sealing
from gitive.core.clock import now_ms
from gitive.errors import InvalidRecord, NotAllowed
from gitive.index.catchup import catch_up
from gitive.index.sealed import SEALABLE, Keyring
from gitive.store import bodies, logs

if TYPE_CHECKING:
    from gitive.store.types import Repo
    from gitive.team.hive import Hive

RESEAL_STAGGER_MS = 5 * 60_000  # how long each holder, by rank, leaves to the one before it to re-seal


class Epoch(NamedTuple):
    id: str
    recipients: frozenset[str]
    wraps: frozenset[str]
    order: tuple[int, str, int]  # (at, author, seq): the newest epoch that fits is used


def scope_text(scope: dict[str, Any]) -> str:
    return canonical.dumps(scope).decode()


def audience(conn: sqlite3.Connection, scope: dict[str, Any]) -> set[str]:
    """The machines that should read ``scope`` now."""
    if "personal" in scope:
        rows = conn.execute("SELECT machine FROM members WHERE person = ? AND active = 1 AND role != 'anchor'",
                            (scope["personal"],))
    elif "project" in scope:
        rows = conn.execute("SELECT machine FROM members WHERE active = 1")
    else:
        raise InvalidRecord("only personal and project scopes are sealed: team scope is read by the whole team")
    return {r[0] for r in rows}


def epochs(conn: sqlite3.Connection, scope: dict[str, Any]) -> list[Epoch]:
    """The epochs of ``scope`` that writers use: admitted, and by a machine that may write that scope's keys."""
    sql = ("SELECT k.epoch, k.recipients, k.wraps, k.at, k.author, k.seq FROM scope_keys k "
           "JOIN admitted_entries a ON a.author = k.author AND a.log = k.log AND a.seq = k.seq "
           "JOIN members m ON m.machine = k.author WHERE k.scope = ?")
    args: tuple[str, ...] = (scope_text(scope),)
    if "personal" in scope:
        sql, args = sql + " AND m.person = ?", (*args, scope["personal"])
    return [Epoch(e, frozenset(json.loads(r)), frozenset(json.loads(w)), (at, author, seq))
            for e, r, w, at, author, seq in conn.execute(sql, args)]


def _reachable(found: list[Epoch], machine: str) -> set[str]:
    """The epochs ``machine`` can open: those sealed to it, and every one wrapped below them."""
    by_id: dict[str, list[Epoch]] = {}
    for e in found:
        by_id.setdefault(e.id, []).append(e)
    out = {e.id for e in found if machine in e.recipients}
    queue = list(out)
    while queue:
        for e in by_id.get(queue.pop(), []):
            for old in e.wraps - out:
                out.add(old)
                queue.append(old)
    return out


def exposure(conn: sqlite3.Connection) -> dict[str, set[str]]:
    """For every epoch, the machines that may hold its key: its recipients, and those of every epoch that
    claims to wrap it. All scope-key rows count here, whoever wrote them: a writer must never use a key that
    a machine outside the audience may have (a false claim only makes it start a new epoch)."""
    sealed_to: dict[str, set[str]] = {}
    wrapped_by: dict[str, set[str]] = {}
    for epoch, recipients, wraps in conn.execute("SELECT epoch, recipients, wraps FROM scope_keys"):
        sealed_to.setdefault(epoch, set()).update(json.loads(recipients))
        for old in json.loads(wraps):
            wrapped_by.setdefault(old, set()).add(epoch)
    out: dict[str, set[str]] = {}

    def holders(epoch: str, path: frozenset[str]) -> set[str]:
        if epoch not in out:
            found = set(sealed_to.get(epoch, ()))
            for newer in wrapped_by.get(epoch, ()):
                if newer not in path:  # wraps only point to older keys; a forged cycle ends here
                    found |= holders(newer, path | {newer})
            out[epoch] = found
        return out[epoch]

    for epoch in list(sealed_to) + list(wrapped_by):
        holders(epoch, frozenset({epoch}))
    return out


def _start(hive: Hive, conn: sqlite3.Connection, keyring: Keyring, repo: Repo, log: str,
           scope: dict[str, Any], readers: set[str], held: list[Epoch]) -> tuple[str, bytes]:
    """Write a new epoch of ``scope`` sealed to ``readers``, wrapping the held epochs no other held one wraps."""
    key = sealing.new_key()
    wrapped = {w for e in held for w in e.wraps}
    tips = sorted({e.id for e in held} - wrapped)
    record = {"type": "scope-key", "v": sealing.SEALED_VERSION, "epoch": sealing.epoch_id(key),
              "recipients": {m: sealing.seal_key_to(m, key) for m in sorted(readers)},
              "wraps": {old: sealing.wrap(key, keyring.keys()[old]) for old in tips}}
    logs.append(repo, hive.key, hive.team_id, log, scope, record)
    catch_up(hive, conn)
    keyring.forget()
    return record["epoch"], key


def current(hive: Hive, conn: sqlite3.Connection, keyring: Keyring, repo: Repo, log: str,
            scope: dict[str, Any]) -> tuple[str, bytes]:
    """(epoch id, key) a new record of ``scope`` is sealed with, starting a new epoch when no held one is
    sealed to exactly the audience.

    Raises:
        NotAllowed: this machine is not in the scope's audience (another person's scope, or removed).
    """
    readers = audience(conn, scope)
    if hive.me not in readers:
        raise NotAllowed(f"this machine may not write {_named(scope)}: it is read only by "
                         f"{'that person' if 'personal' in scope else 'the team'}'s active machines")
    held = [e for e in epochs(conn, scope) if keyring.key(e.id) is not None]
    exposed = exposure(conn)
    fitting = sorted((e for e in held if e.recipients == readers and exposed.get(e.id, set()) == readers),
                     key=lambda e: e.order)
    if fitting:
        return fitting[-1].id, keyring.keys()[fitting[-1].id]
    return _start(hive, conn, keyring, repo, log, scope, readers, held)


def _named(scope: dict[str, Any]) -> str:
    return f"{scope['personal']}'s personal scope" if "personal" in scope else "this sealed project scope"


def write(hive: Hive, conn: sqlite3.Connection, repo: Repo, log: str, scope: dict[str, Any],
          record: dict[str, Any], body_items: dict[str, bytes] | None = None, *, migrated: str | None = None,
          at: int | None = None) -> logs.Entry:
    """Seal ``record`` (and the bodies it names, ``body hash -> canonical bytes``) and write it to ``log``.

    Bodies first, under their sealed names, as for a plain record (a header whose body is missing is
    recoverable). ``migrated`` names the entry it was copied from (:mod:`gitive.index.personal_migration`).

    Raises:
        InvalidRecord: the record fails its checks, or its kind is never sealed; nothing was written.
        NotAllowed: this machine may not write the scope.
    """
    kind = records.check_record(record)
    if kind not in SEALABLE:
        raise InvalidRecord(f"a {kind} record is never sealed; sealed scopes hold {', '.join(SEALABLE)}")
    keyring = Keyring(conn, hive.machine_key)
    epoch, key = current(hive, conn, keyring, repo, log, scope)
    if body_items:
        bodies.put_many(repo, hive.key, hive.team_id,
                        {sealing.body_name(key, h): sealing.seal_body(key, data) for h, data in body_items.items()})
    sealed = {"type": "sealed", "v": sealing.SEALED_VERSION, "epoch": epoch,
              "box": sealing.seal_record(key, hive.me, log, record, migrated)}
    return logs.append(repo, hive.key, hive.team_id, log, scope, sealed, at=at)


def _my_turn(conn: sqlite3.Connection, me: str, readers: set[str], missing: set[str], now: int) -> bool:
    """Holders re-seal in turn by machine id, each ``RESEAL_STAGGER_MS`` after the one before it, counted from
    the newest roster change of a machine that lacks a key."""
    holders = sorted((readers - missing) | {me})
    marks = ",".join("?" * len(missing))
    since = conn.execute(f"SELECT MAX(ts) FROM members WHERE machine IN ({marks})", sorted(missing)).fetchone()[0]
    return now - (since or 0) >= holders.index(me) * RESEAL_STAGGER_MS


def reseal(hive: Hive, conn: sqlite3.Connection, sealed_scopes: list[tuple[Repo, str, dict[str, Any]]],
           now: int | None = None) -> int:
    """For each (store, log, scope) this machine writes, start a new epoch when a machine of the audience
    cannot open an epoch this machine holds; return how many were started."""
    if not conn.execute("SELECT 1 FROM scope_keys LIMIT 1").fetchone():
        return 0  # no sealed scope in this index: an idle sync pays one query
    keyring = Keyring(conn, hive.machine_key)
    now = now if now is not None else now_ms()
    started = 0
    for repo, log, scope in sealed_scopes:
        found = epochs(conn, scope)
        readers = audience(conn, scope) if found else set()
        if hive.me not in readers:
            continue
        held = [e for e in found if keyring.key(e.id) is not None]
        if not held:
            continue
        ids = {e.id for e in held}
        missing = {m for m in readers if not ids <= _reachable(found, m)}
        if missing and _my_turn(conn, hive.me, readers, missing, now):
            _start(hive, conn, keyring, repo, log, scope, readers, held)
            started += 1
    return started
