"""Lesson bodies in the index: loaded from the body stores, checked against the hash in the signed header,
and dropped from this machine's own store once refused (retracted).
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pygit2

from gitive.constants import BODIES_REF_PREFIX, REMOTES_REF_PREFIX
from gitive.core import canonical
from gitive.core.lessons import MAX_SYMPTOM, MAX_SYMPTOMS, MAX_TEXT, body_hash
from gitive.errors import InvalidRecord
from gitive.store import bodies, refs


def _body_index(stores: list[pygit2.Repository]) -> dict[str, tuple[pygit2.Repository, pygit2.Oid]]:
    """Every body any body store here holds: hash -> (repository, blob id)."""
    found: dict[str, tuple[pygit2.Repository, pygit2.Oid]] = {}
    for repo in stores:
        for name, oid in refs.tips(repo, "refs/").items():
            if name.startswith(BODIES_REF_PREFIX) or (name.startswith(REMOTES_REF_PREFIX) and "/bodies/" in name):
                commit = repo[oid]
                if isinstance(commit, pygit2.Commit):
                    for item in commit.tree:
                        found.setdefault(item.name, (repo, item.id))
    return found


def parse_body(data: bytes) -> dict[str, Any]:
    """A lesson body from a peer's store, checked for shape (its hash is checked by the caller).

    Raises:
        InvalidRecord: not a lesson body.
    """
    value = canonical.loads_canonical(data)
    if (not isinstance(value, dict) or not {"text", "applicability", "quote"} <= value.keys() <= _BODY_KEYS
            or not isinstance(value["text"], str) or not isinstance(value["applicability"], str)
            or len(value["text"]) > MAX_TEXT or not (value["quote"] is None or isinstance(value["quote"], dict))
            or not _symptoms_ok(value.get("symptoms", []))):
        raise InvalidRecord("not a lesson body")
    return value


_BODY_KEYS = {"text", "applicability", "quote", "symptoms"}  # symptoms: body format 2, optional


def _symptoms_ok(symptoms: Any) -> bool:
    return (isinstance(symptoms, list) and len(symptoms) <= MAX_SYMPTOMS
            and all(isinstance(s, str) and 0 < len(s) <= MAX_SYMPTOM for s in symptoms))


def wanted_bodies(conn: sqlite3.Connection) -> dict[str, str]:
    """Body hashes the index lacks (lesson bodies and reviewers' edits) -> their lesson id."""
    rows = conn.execute(
        "SELECT body_hash, id FROM lessons WHERE body_hash NOT IN (SELECT body_hash FROM lesson_bodies) "
        "UNION SELECT edits, about FROM reviews WHERE edits IS NOT NULL "
        "AND edits NOT IN (SELECT body_hash FROM lesson_bodies)"
    ).fetchall()
    refused = {r[0] for r in conn.execute("SELECT body_hash FROM refused_bodies")}
    return {h: lesson for h, lesson in rows if h not in refused}


def attach_bodies(conn: sqlite3.Connection, stores: list[pygit2.Repository]) -> set[str]:
    """Load bodies the index lacks from the body stores; return the lessons whose text changed."""
    wanted = wanted_bodies(conn)
    if not wanted:
        return set()
    available = _body_index(stores)
    changed = set()
    for hash_, lesson in wanted.items():
        if hash_ not in available:
            continue
        repo, oid = available[hash_]
        try:
            value = parse_body(repo[oid].data)
        except InvalidRecord:
            continue
        if body_hash(lesson, value) != hash_:
            continue  # a body that does not match its signed hash is ignored
        conn.execute("INSERT OR IGNORE INTO lesson_bodies(body_hash, lesson, text, applicability, quote, symptoms) "
                     "VALUES (?,?,?,?,?,?)",
                     (hash_, lesson, value["text"], value["applicability"],
                      json.dumps(value["quote"]) if value["quote"] else None,
                      json.dumps(value["symptoms"]) if value.get("symptoms") else None))
        changed.add(lesson)
    return changed


def drop_own_bodies(stores: list[pygit2.Repository], key: object, team_id: str, me: str,
                    hashes: list[str] | None = None, conn: sqlite3.Connection | None = None) -> int:
    """Remove refused bodies (``hashes``, or every refused one in ``conn``) from this machine's own body
    stores, so the next push drops them from the remote too; return how many stores changed."""
    if hashes is None:
        assert conn is not None
        hashes = [r[0] for r in conn.execute("SELECT body_hash FROM refused_bodies")]
    changed = 0
    for repo in stores:
        mine = set(bodies.hashes(repo, me))
        gone = [h for h in hashes if h in mine]
        if gone and bodies.delete(repo, key, team_id, gone):  # type: ignore[arg-type]
            changed += 1
    return changed
