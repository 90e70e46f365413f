"""Obligations in the index: each obligation's state from its signed changes, and the anchor's firings.

A projection like the rest of the index: rebuilt from verified entries whenever an obligation-kind entry or
the roster changed (a fingerprint in ``meta`` says when), so it always equals a rebuild. The rules readers
enforce here, whatever a writer did (docs/obligations.md):

- the id is ``blake3([author, record without id])``, so nobody can reuse another obligation's id;
- the owner is an active roster person, never the anchor; an agent records only its own person's
  obligations (a person, at a terminal, may record what someone else owes);
- a record acts as a person (``actor: "person"``) only with that person's gesture: a signature by a key
  registered for the author machine's person (docs/verification.md §3), which an agent with a shell cannot
  make; without one it is judged by an agent's rules (the ``actor`` column keeps what the record says);
- ``action`` is at most 500 characters; ``expires`` is at most 90 days after ``created`` (clamped);
- done, cancel and renew are accepted from the owner's machines or from a person; an agent cannot change an
  obligation it does not own, and nothing an anchor signs changes one;
- a firing or a verdict counts only when an anchor signed it; the first firing per (obligation, reason) wins.

Conditions are not compiled here (the index sits below the anchor): ``gitive owed`` and the tick do that.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from typing import Any

from gitive.core.ids import record_id
from gitive.index import db, queries

KINDS = ("obligation", "obligation-state", "firing", "verdict")
MAX_ACTION = 500
MAX_EXPIRY_MS = 90 * 86_400_000
DEFAULT_EXPIRY_MS = 7 * 86_400_000
_META = "obligations-fingerprint"
_NOT_IN_ID = ("id", "gesture", "endorse")  # gitive.core.gesture.FIELDS, without loading PyNaCl


def obligation_id(author: str, record: dict[str, Any]) -> str:
    """The id an obligation record must carry: blake3 of its author and every other field but its gesture
    (which signs the id with the rest)."""
    return record_id(author, {k: v for k, v in record.items() if k not in _NOT_IN_ID})


def fingerprint(conn: sqlite3.Connection) -> str:
    """Changes when an entry of these kinds arrives, or when who may sign what changes."""
    marks = ",".join("?" * len(KINDS))
    newest = conn.execute(f"SELECT MAX(rowid), COUNT(*) FROM entries WHERE kind IN ({marks})", KINDS).fetchone()
    members = conn.execute("SELECT group_concat(machine || role || active || ts, ',') FROM "
                           "(SELECT * FROM members ORDER BY machine)").fetchone()[0]
    keys = conn.execute("SELECT group_concat(person || key, ',') FROM (SELECT * FROM person_keys ORDER BY 1, 2)"
                        ).fetchone()[0]
    exempt = conn.execute("SELECT group_concat(machine || log || seq, ',') FROM "
                          "(SELECT * FROM gesture_exempt ORDER BY 1, 2)").fetchone()[0]
    quarantine = conn.execute("SELECT group_concat(author || log || quarantined_from, ',') FROM logs "
                              "WHERE quarantined_from IS NOT NULL").fetchone()[0]
    marks = (tuple(newest), members, quarantine, keys, exempt, db.meta_get(conn, db.TEAM_META))
    return hashlib.blake2b(repr(marks).encode(), digest_size=16).hexdigest()


def current_fingerprint(conn: sqlite3.Connection) -> str:
    """The fingerprint the tables were last rebuilt at (what :func:`refresh` just checked), without recomputing it."""
    return db.meta_get(conn, _META) or fingerprint(conn)


def refresh(conn: sqlite3.Connection, *, force: bool = False) -> bool:
    """Bring the obligation tables up to date; true if they were rebuilt. Cheap when nothing changed."""
    mark = fingerprint(conn)
    if not force and db.meta_get(conn, _META) == mark:
        return False
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN IMMEDIATE")
    try:
        _rebuild(conn)
        db.meta_set(conn, _META, mark)
        if own:
            conn.execute("COMMIT")
    except BaseException:
        if own:
            conn.execute("ROLLBACK")
        raise
    return True


def _entries(conn: sqlite3.Connection, kind: str) -> list[dict[str, Any]]:
    found = queries.verified_entries(conn, kind=kind, limit=1 << 40)
    return sorted(found, key=lambda e: (e["at"], e["author"], e["log"], e["seq"]))


def _roles(conn: sqlite3.Connection) -> tuple[dict[str, str], set[str]]:
    """Machine -> role, and the persons with an active non-anchor machine."""
    roles, persons = {}, set()
    for machine, person, role, active in conn.execute("SELECT machine, person, role, active FROM members"):
        roles[machine] = role
        if active and role != "anchor":
            persons.add(person)
    return roles, persons


def _actor(conn: sqlite3.Connection, entry: dict[str, Any]) -> str:
    """``person`` when the entry says so and carries its person's valid gesture, else ``agent``."""
    from gitive.index import deciding  # PyNaCl loads only when obligations are rebuilt

    record = entry["record"]
    if record.get("actor") != "person":
        return "agent"
    gestured = deciding.counts_as_decision(conn, entry["author"], entry["log"], entry["seq"], entry["person"], record)
    return "person" if gestured else "agent"


def _problem(entry: dict[str, Any], roles: dict[str, str], persons: set[str]) -> str | None:
    record = entry["record"]
    if record["id"] != obligation_id(entry["author"], record):
        return "its id does not match its content"
    if roles.get(entry["author"]) == "anchor":
        return "an anchor cannot record obligations"
    if record["owner"] not in persons:
        return f"owner {record['owner']!r} is not an active person of the team"
    if entry["actor"] != "person" and entry["person"] != record["owner"]:
        return ("an agent records only its own person's obligations" if record["actor"] != "person" else
                "a person's obligation for someone else needs their gesture (a signature with their person key)")
    if len(record["action"]) > MAX_ACTION:
        return f"its action is over {MAX_ACTION} characters"
    return None


def _decided(conn: sqlite3.Connection, entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Obligation changes without replayed copies of a person's gestured change, in the order of their signed
    times (gitive/core/decisions.py): an agent's copy of an old renewal cannot set an expiry back."""
    state = {(a, log, seq): (counted, decided_at) for a, log, seq, counted, decided_at in conn.execute(
        "SELECT author, log, seq, counted, decided_at FROM decisions WHERE kind = 'obligation-state'")}
    kept = []
    for e in entries:
        counted, decided_at = state.get((e["author"], e["log"], e["seq"]), (1, None))
        if counted != 0:
            kept.append((decided_at if decided_at is not None else e["at"], e))
    return [e for _, e in sorted(kept, key=lambda k: (k[0], k[1]["author"], k[1]["log"], k[1]["seq"]))]


def _rebuild(conn: sqlite3.Connection) -> None:
    for table in ("obligations", "obligation_changes", "firings", "verdicts"):
        conn.execute(f"DELETE FROM {table}")
    roles, persons = _roles(conn)
    for entry in _entries(conn, "obligation"):
        entry["actor"] = _actor(conn, entry)
        record = entry["record"]
        created = record["created"]
        expires = min(record["expires"], created + MAX_EXPIRY_MS)
        conn.execute(
            "INSERT OR IGNORE INTO obligations VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (record["id"], entry["author"], entry["person"], entry["log"], entry["seq"], entry["at"],
             record["owner"], record.get("to"), record["condition"], record["action"], record.get("deadline"),
             expires, created, json.dumps(record["source"], sort_keys=True),
             json.dumps(record.get("files") or []), record.get("project"), record["actor"], "open", None, None,
             _problem(entry, roles, persons)))
    for entry in _decided(conn, _entries(conn, "obligation-state")):
        entry["actor"] = _actor(conn, entry)
        _apply_change(conn, entry, roles)
    for entry in _entries(conn, "firing"):
        if roles.get(entry["author"]) != "anchor":
            continue
        r = entry["record"]
        conn.execute("INSERT OR IGNORE INTO firings VALUES (?,?,?,?,?,?,?,?,?)",
                     (r["obligation"], r["reason"], entry["author"], entry["seq"], r["item"], r["due"],
                      int(r["late"]), json.dumps(r.get("event") or {}, sort_keys=True), entry["at"]))
    for entry in _entries(conn, "verdict"):
        if roles.get(entry["author"]) == "anchor":
            r = entry["record"]
            conn.execute("INSERT INTO verdicts VALUES (?,?,?,?,?) ON CONFLICT(obligation) DO UPDATE SET "
                         "value = excluded.value, reason = excluded.reason, author = excluded.author, "
                         "at = excluded.at", (r["obligation"], r["value"], r["reason"], entry["author"], entry["at"]))


def _apply_change(conn: sqlite3.Connection, entry: dict[str, Any], roles: dict[str, str]) -> None:
    record = entry["record"]
    row = conn.execute("SELECT owner, state, problem, created FROM obligations WHERE id = ?",
                       (record["obligation"],)).fetchone()
    reason = _change_refused(entry, roles, row)
    conn.execute("INSERT INTO obligation_changes VALUES (?,?,?,?,?,?,?,?,?,?)",
                 (entry["author"], entry["log"], entry["seq"], record["obligation"], record["state"],
                  entry["person"], record["actor"], int(reason is None), reason, entry["at"]))
    if reason is not None:
        return
    if record["state"] == "renewed":
        conn.execute("UPDATE obligations SET expires = ?, state_at = ?, state_by = ? WHERE id = ?",
                     (min(record["expires"], entry["at"] + MAX_EXPIRY_MS), entry["at"], entry["person"],
                      record["obligation"]))
    else:
        conn.execute("UPDATE obligations SET state = ?, state_at = ?, state_by = ? WHERE id = ?",
                     (record["state"], entry["at"], entry["person"], record["obligation"]))


def _change_refused(entry: dict[str, Any], roles: dict[str, str], row: tuple[Any, ...] | None) -> str | None:
    record = entry["record"]
    if row is None:
        return "no such obligation"
    owner, state, problem, _ = row
    if problem:
        return f"the obligation itself was refused: {problem}"
    if roles.get(entry["author"]) == "anchor":
        return "an anchor cannot change an obligation"
    if state != "open":
        return f"the obligation is already {state}"
    if entry["person"] != owner and entry["actor"] != "person":
        if record["actor"] == "person":
            return f"to {_verb(record['state'])} an obligation {owner} owns, a person needs their gesture"
        return f"an agent cannot {_verb(record['state'])} an obligation {owner} owns"
    if record["state"] == "renewed" and not isinstance(record.get("expires"), int):
        return "a renewal needs a new expiry"
    return None


def _verb(state: str) -> str:
    return {"done": "mark done", "cancelled": "cancel", "renewed": "renew"}[state]


COLUMNS = ("id", "author", "person", "log", "seq", "at", "owner", "to", "condition", "action", "deadline",
           "expires", "created", "source", "files", "project", "actor", "state", "state_at", "state_by",
           "problem")


def rows(conn: sqlite3.Connection, where: str = "", args: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    """Obligations as dicts (``source`` and ``files`` decoded), oldest first, with their firings."""
    out = []
    for row in conn.execute(f"SELECT * FROM obligations {where} ORDER BY created, id", args):
        item = dict(zip(COLUMNS, row, strict=True))
        item["source"], item["files"] = json.loads(item["source"]), json.loads(item["files"])
        item["firings"] = {r[0]: {"item": r[1], "due": r[2], "late": bool(r[3]), "event": json.loads(r[4]),
                                  "at": r[5], "anchor": r[6]}
                           for r in conn.execute("SELECT reason, item, due, late, event, at, author FROM firings "
                                                 "WHERE obligation = ?", (item["id"],))}
        verdict = conn.execute("SELECT value, reason, at FROM verdicts WHERE obligation = ?", (item["id"],)).fetchone()
        item["verdict"] = {"value": verdict[0], "reason": verdict[1], "at": verdict[2]} if verdict else None
        out.append(item)
    return out


def refused_changes(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    keys = ("author", "log", "seq", "obligation", "state", "person", "actor", "reason", "at")
    return [dict(zip(keys, r, strict=True)) for r in conn.execute(
        "SELECT author, log, seq, obligation, state, person, actor, reason, at FROM obligation_changes "
        "WHERE accepted = 0 ORDER BY at")]


_OPEN = ("SELECT id, owner, to_, condition, action, deadline, expires, created, files FROM obligations "
         "WHERE state = 'open' AND problem IS NULL")


def open_obligations(conn: sqlite3.Connection, where: str = "", args: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
    """Open obligations (not done or cancelled; lapsed ones included) in one query, without their firings."""
    keys = ("id", "owner", "to", "condition", "action", "deadline", "expires", "created", "files")
    out = []
    for row in conn.execute(f"{_OPEN} {where} ORDER BY created, id", args):
        item = dict(zip(keys, row, strict=True))
        item["files"] = json.loads(item["files"])
        out.append(item)
    return out


def fired(conn: sqlite3.Connection) -> set[tuple[str, str]]:
    """(obligation, reason) of every firing an anchor signed."""
    return set(conn.execute("SELECT obligation, reason FROM firings").fetchall())


def firings_by(conn: sqlite3.Connection, author: str) -> list[dict[str, Any]]:
    keys = ("obligation", "reason", "item", "due", "late", "event", "at")
    out = []
    for row in conn.execute("SELECT obligation, reason, item, due, late, event, at FROM firings WHERE author = ?",
                            (author,)):
        item = dict(zip(keys, row, strict=True))
        item["late"], item["event"] = bool(item["late"]), json.loads(item["event"])
        out.append(item)
    return out


def verdicts(conn: sqlite3.Connection) -> dict[str, tuple[str, str]]:
    return {r[0]: (r[1], r[2]) for r in conn.execute("SELECT obligation, value, reason FROM verdicts")}
