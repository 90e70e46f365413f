"""Lesson tables of the index: headers, bodies, reviews, tombstones and the FTS5 text index.

Rows are projected from structurally verified entries as they are ingested; readers join ``members`` so that
only admitted authors count (the roster may arrive after the lessons it vouches for). Bodies come from the
body stores, checked against the hash in the signed header before they are believed.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pygit2

from gitive.constants import BODIES_REF_PREFIX, REMOTES_REF_PREFIX
from gitive.core import canonical
from gitive.core.lessons import MAX_TEXT, body_hash
from gitive.errors import InvalidRecord
from gitive.index import projects
from gitive.store import bodies, refs
from gitive.store.logs import Entry

KINDS = ("lesson", "review", "tombstone", "project-member", "citation")


def _scope(scope: dict[str, Any]) -> tuple[str, str]:
    (name, value), = scope.items()
    return name, "" if value is True else str(value)


def project_entry(conn: sqlite3.Connection, entry: Entry) -> None:
    """Project one newly inserted entry of a lesson kind into its table."""
    body, record = entry.body, entry.body["record"]
    key = (body["author"], body["log"], body["seq"])
    kind = record["type"]
    if kind == "lesson":
        evidence = record["evidence"] if isinstance(record["evidence"], list) else []
        files = " ".join(sorted({e["path"] for e in evidence if isinstance(e, dict) and e.get("kind") == "file"
                                 and isinstance(e.get("path"), str)}))
        scope_kind, scope_value = _scope(body["scope"])
        conn.execute(
            "INSERT OR IGNORE INTO lessons VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (record["id"], *key, scope_kind, scope_value, record["kind"], json.dumps(evidence), files,
             json.dumps(record["tags"]), record.get("supersedes"), record["body_hash"], int(record["hearsay"]),
             record.get("session"), body["at"]),
        )
    elif kind == "review":
        conn.execute("INSERT OR IGNORE INTO reviews VALUES (?,?,?,?,?,?,?,?,?,?)",
                     (*key, record["about"], record["approver"], int(record["approved"]), record["note"],
                      record.get("edits"), json.dumps(record.get("scope")), body["at"]))
    elif kind == "tombstone":
        conn.execute("INSERT OR IGNORE INTO tombstones VALUES (?,?,?,?,?,?,?,0)",
                     (*key, record["lesson"], record["reason"], json.dumps(record["bodies"]), body["at"]))
    elif kind == "citation":
        conn.execute("INSERT INTO lesson_stats VALUES (?, 1, ?) ON CONFLICT(lesson) DO UPDATE SET "
                     "citations = citations + 1, successes = successes + excluded.successes",
                     (record["lesson"], int(record["success"])))
    elif kind == "project-member":
        conn.execute("INSERT OR IGNORE INTO project_members VALUES (?,?,?,?,?,?,?,?)",
                     (*key, record["project"], record["person"], record["role"], int(record["confirmed"]),
                      body["at"]))


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
    if (not isinstance(value, dict) or value.keys() != {"text", "applicability", "quote"}
            or not isinstance(value["text"], str) or not isinstance(value["applicability"], str)
            or len(value["text"]) > MAX_TEXT or not (value["quote"] is None or isinstance(value["quote"], dict))):
        raise InvalidRecord("not a lesson body")
    return value


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
        conn.execute("INSERT OR IGNORE INTO lesson_bodies VALUES (?,?,?,?,?)",
                     (hash_, lesson, value["text"], value["applicability"],
                      json.dumps(value["quote"]) if value["quote"] else None))
        changed.add(lesson)
    return changed


def effective_body(conn: sqlite3.Connection, lesson: str) -> tuple[str, str, str | None, str] | None:
    """The text to show: the latest approving reviewer's edit if any, else the author's body."""
    row = conn.execute(
        "SELECT b.text, b.applicability, b.quote, b.body_hash FROM valid_reviews r JOIN lesson_bodies b "
        "ON b.body_hash = r.edits WHERE r.about = ? AND r.approved = 1 ORDER BY r.at DESC LIMIT 1", (lesson,)
    ).fetchone()
    if row:
        return row
    return conn.execute(
        "SELECT b.text, b.applicability, b.quote, b.body_hash FROM lessons l JOIN lesson_bodies b "
        "ON b.body_hash = l.body_hash WHERE l.id = ?", (lesson,)
    ).fetchone()


def _drop_text(conn: sqlite3.Connection, lesson: str) -> None:
    row = conn.execute("SELECT fts_rowid FROM lesson_text WHERE lesson = ?", (lesson,)).fetchone()
    if row:
        conn.execute("DELETE FROM lesson_fts WHERE rowid = ?", (row[0],))
        conn.execute("DELETE FROM lesson_text WHERE lesson = ?", (lesson,))


def refresh_fts(conn: sqlite3.Connection, lessons: set[str]) -> None:
    for lesson in lessons:
        _drop_text(conn, lesson)
        found = effective_body(conn, lesson)
        if found is None:
            continue
        tags = conn.execute("SELECT tags FROM lessons WHERE id = ?", (lesson,)).fetchone()
        cur = conn.execute("INSERT INTO lesson_fts VALUES (?,?,?,?)",
                           (lesson, found[0], found[1], " ".join(json.loads(tags[0])) if tags else ""))
        conn.execute("INSERT INTO lesson_text VALUES (?,?,?,?)", (lesson, cur.lastrowid, found[0], found[1]))


def may_retract(conn: sqlite3.Connection, tomb_author: str, lesson: str) -> bool | None:
    """May the machine ``tomb_author`` retract ``lesson``? None while the lesson is unknown here."""
    row = conn.execute("SELECT author, scope_kind, scope_value FROM lessons WHERE id = ?", (lesson,)).fetchone()
    if row is None:
        return None
    person = conn.execute("SELECT person FROM members WHERE machine = ?", (tomb_author,)).fetchone()
    if person is None:
        return False
    person = person[0]
    author_person = conn.execute("SELECT person FROM members WHERE machine = ?", (row[0],)).fetchone()
    if author_person and author_person[0] == person:
        return True
    reviewers = {r[0] for r in conn.execute("SELECT approver FROM valid_reviews WHERE about = ?", (lesson,))}
    allowed = projects.confirmed(conn, row[2]) if row[1] == "project" else None
    if person in reviewers and (allowed is None or person in allowed):  # a reviewer with authority
        return True
    return row[1] == "project" and person in projects.owners(conn, row[2])


def apply_tombstones(conn: sqlite3.Connection) -> set[str]:
    """Drop the bodies of retracted lessons from the index and refuse them from now on."""
    retracted = set()
    for author, log, seq, lesson, listed in conn.execute(
            "SELECT author, log, seq, lesson, bodies FROM tombstones WHERE applied = 0").fetchall():
        if not may_retract(conn, author, lesson):
            continue
        hashes = set(json.loads(listed))
        hashes |= {r[0] for r in conn.execute("SELECT body_hash FROM lessons WHERE id = ?", (lesson,))}
        hashes |= {r[0] for r in conn.execute("SELECT edits FROM reviews WHERE about = ? AND edits IS NOT NULL",
                                              (lesson,))}
        for h in hashes:
            conn.execute("INSERT OR IGNORE INTO refused_bodies VALUES (?, ?)", (h, lesson))
            conn.execute("DELETE FROM lesson_bodies WHERE body_hash = ?", (h,))
        _drop_text(conn, lesson)
        conn.execute("UPDATE tombstones SET applied = 1 WHERE author = ? AND log = ? AND seq = ?", (author, log, seq))
        retracted.add(lesson)
    return retracted


def after_ingest(conn: sqlite3.Connection, stores: list[pygit2.Repository], touched: set[str],
                 roster_changed: bool = False) -> None:
    """Bring bodies, tombstones, states and the text index up to date after new entries or bodies arrived."""
    retracted = apply_tombstones(conn)
    changed = attach_bodies(conn, stores) | touched
    refresh_fts(conn, changed - retracted)
    recompute_status(conn, None if roster_changed else changed | retracted)


_LAST_REVIEW = """
    SELECT approved, approver, at FROM valid_reviews WHERE about = ? ORDER BY at DESC, author DESC, seq DESC
"""


def _last_review(conn: sqlite3.Connection, lesson: str) -> tuple[int, str, int] | None:
    """The latest review with authority: for a project lesson, by a confirmed member of its project."""
    row = conn.execute("SELECT scope_kind, scope_value FROM lessons WHERE id = ?", (lesson,)).fetchone()
    allowed = projects.confirmed(conn, row[1]) if row and row[0] == "project" else None
    for review in conn.execute(_LAST_REVIEW, (lesson,)):
        if allowed is None or review[1] in allowed:
            return review
    return None


def _status(conn: sqlite3.Connection, lesson: str) -> tuple[str, str | None, int | None, str | None] | None:
    if not conn.execute("SELECT 1 FROM visible_lessons WHERE id = ?", (lesson,)).fetchone():
        return None
    if conn.execute("SELECT 1 FROM tombstones WHERE lesson = ? AND applied = 1", (lesson,)).fetchone():
        return ("retracted", None, None, None)
    review = _last_review(conn, lesson)
    for (successor,) in conn.execute("SELECT id FROM visible_lessons WHERE supersedes = ?", (lesson,)).fetchall():
        later = _last_review(conn, successor)
        retracted = conn.execute("SELECT 1 FROM tombstones WHERE lesson = ? AND applied = 1", (successor,)).fetchone()
        if later and later[0] and not retracted:
            return ("superseded", review[1] if review else None, review[2] if review else None, successor)
    if review is None:
        return ("proposed", None, None, None)
    return ("verified" if review[0] else "rejected", review[1], review[2], None)


def recompute_status(conn: sqlite3.Connection, lessons: set[str] | None = None) -> None:
    """Refresh the materialized lifecycle state of ``lessons`` (all of them when None)."""
    if lessons is None:
        conn.execute("DELETE FROM lesson_status")
        lessons = {r[0] for r in conn.execute("SELECT id FROM lessons")}
    else:
        # A superseding lesson changes its predecessor's state too.
        lessons = lessons | {r[0] for r in conn.execute(
            f"SELECT supersedes FROM lessons WHERE supersedes IS NOT NULL AND id IN ({','.join('?' * len(lessons))})",
            tuple(lessons))}
    for lesson in lessons:
        status = _status(conn, lesson)
        if status is None:
            conn.execute("DELETE FROM lesson_status WHERE lesson = ?", (lesson,))
        else:
            conn.execute("INSERT INTO lesson_status VALUES (?,?,?,?,?) ON CONFLICT(lesson) DO UPDATE SET "
                         "state = excluded.state, approver = excluded.approver, "
                         "reviewed_at = excluded.reviewed_at, superseded_by = excluded.superseded_by",
                         (lesson, *status))


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
