"""Index step 0010: entry rows keep only their records, and the search index keeps neither text nor row sizes.

Real hives written with propose/review. An index in the format before the step (whole envelopes, a search
index holding its text) migrates in place and then equals an index rebuilt from git; a contentless search row
is deleted exactly (what it indexed is gone from the vocabulary) when the shown text changes, a file is added
to the lesson, or its body is dropped; one that cannot be rebuilt is left behind and rebuilt away.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from gitive.core import canonical
from gitive.index import db, lesson_files, lesson_text
from gitive.index.refresh import fresh_index
from gitive.lessons import recall
from gitive.lessons.propose import propose
from gitive.lessons.review import review
from gitive.store import logs
from gitive.team.hive import Hive, open_hive
from gitive.team.projects import project_id
from testing import fixtures, people

QUERIES = ("session pool", "migration lock", "retry budget", "cookie", "schema")


@pytest.fixture
def hive(bare_remote: Path, make_clone: Callable[[str | Path, str], Path], monkeypatch: pytest.MonkeyPatch) -> Hive:
    clone = make_clone(bare_remote, "alice")
    for name in ("app/db.py", "app/web.py", "README.md"):
        fixtures.commit_file(clone, name, f"# {name}\n")
    monkeypatch.chdir(clone)
    assert people.run_deciding(["init", "--person", "alice"]) == 0
    return open_hive(clone)


def _add(hive: Hive, text: str, path: str = "README.md", *, approve: bool = True) -> str:
    with fresh_index(hive) as (conn, _):
        made = propose(hive, conn, kind="Gotcha", text=text, evidence=[f"file:{path}"], symptoms=["pool timeout"])
        if approve:
            review(hive, conn, made.id, approved=True, signer=people.person_key())
    return made.id


def _edit(hive: Hive, lesson: str, text: str) -> None:
    with fresh_index(hive) as (conn, _):
        review(hive, conn, lesson, approved=True, text=text, signer=people.person_key())


def _terms(conn: sqlite3.Connection) -> dict[str, set[str]]:
    """Each shown lesson's indexed terms, read from the search index's vocabulary."""
    lesson_text.indexed_rows(conn)  # makes the vocabulary table
    by_row: dict[int, set[str]] = {}
    for term, doc in conn.execute("SELECT term, doc FROM temp.lesson_fts_instances"):
        by_row.setdefault(doc, set()).add(term)
    lessons = dict(conn.execute("SELECT fts_rowid, lesson FROM lesson_text").fetchall())
    assert set(by_row) == set(lessons), "a search row without a shown lesson, or the reverse"
    return {lessons[row]: terms for row, terms in by_row.items()}


def _state(hive: Hive, conn: sqlite3.Connection) -> dict[str, Any]:
    project = project_id(hive.project)
    return {
        "entries": conn.execute("SELECT author, log, seq, commit_id, kind, hash, scope, envelope FROM entries "
                                "ORDER BY 1, 2, 3").fetchall(),
        "text": conn.execute("SELECT lesson, body_hash, digest FROM lesson_text ORDER BY 1").fetchall(),
        "terms": _terms(conn),
        "found": {q: [r["id"] for r in recall.search(conn, q, project=project, files=["app/db.py"])]
                  for q in QUERIES},
        "stale": conn.execute("SELECT value FROM meta WHERE key = 'lesson_fts_stale'").fetchone(),
    }


def _rebuilt(hive: Hive) -> dict[str, Any]:
    hive.index_path.unlink()
    with fresh_index(hive) as (conn, _):
        return _state(hive, conn)


def _as_before_step_0010(hive: Hive) -> None:
    """Put the index back in the format the code before step 0010 wrote: each entry's whole envelope, as its
    commit holds it, and a search index with its text and row sizes (the table step 0005 made)."""
    conn = sqlite3.connect(hive.index_path, isolation_level=None)
    conn.execute("BEGIN")
    for rowid, commit in conn.execute("SELECT rowid, commit_id FROM entries").fetchall():
        whole = next(logs.read_entry(repo, commit) for repo in hive.stores() if commit in repo)
        conn.execute("UPDATE entries SET envelope = ? WHERE rowid = ?", (whole.raw.decode(), rowid))
    documents = [(rowid, *lesson_text._document_of(conn, lesson, shown)) for rowid, lesson, shown
                 in conn.execute("SELECT fts_rowid, lesson, body_hash FROM lesson_text").fetchall()]
    conn.execute("DROP TABLE lesson_fts")
    conn.execute("CREATE VIRTUAL TABLE lesson_fts USING fts5(text, applicability, tags, symptoms, paths, "
                 "tokenize = 'porter unicode61')")
    conn.executemany("INSERT INTO lesson_fts(rowid, text, applicability, tags, symptoms, paths) VALUES (?,?,?,?,?,?)",
                     documents)
    for table in ("lesson_status", "lesson_bodies"):  # rowid tables again
        (sql,) = conn.execute("SELECT sql FROM sqlite_schema WHERE name = ?", (table,)).fetchone()
        indexes = [r[0] for r in conn.execute("SELECT sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = ? "
                                              "AND sql IS NOT NULL", (table,))]
        conn.execute(f"CREATE TABLE {table}_old{sql[sql.index('('):sql.rindex(')') + 1]}")
        conn.execute(f"INSERT INTO {table}_old SELECT * FROM {table}")
        conn.execute(f"DROP TABLE {table}")
        conn.execute(f"ALTER TABLE {table}_old RENAME TO {table}")
        for index in indexes:
            conn.execute(index)
    conn.execute("DELETE FROM migrations WHERE name = '0010-compact-index'")
    conn.execute("COMMIT")
    conn.close()


def test_an_index_from_before_the_step_migrates_in_place_and_equals_a_rebuild(hive: Hive) -> None:
    first = _add(hive, "The session pool leaks under gevent", "app/db.py")
    _add(hive, "Take the migration lock before a schema change")
    _add(hive, "The retry budget is per client, not per call", approve=False)
    _edit(hive, first, "The session pool leaks sockets under gevent; set pool_pre_ping")
    with fresh_index(hive) as (conn, _):
        current = _state(hive, conn)
    _as_before_step_0010(hive)
    old = sqlite3.connect(hive.index_path)
    assert all(json.loads(env)["sig"] for (env,) in old.execute("SELECT envelope FROM entries"))
    assert "WITHOUT ROWID" not in old.execute("SELECT sql FROM sqlite_schema WHERE name = 'lesson_bodies'").fetchone()[0]
    old.close()
    with db.connect(hive.index_path) as conn:  # the step runs on open
        assert conn.execute("SELECT 1 FROM migrations WHERE name = '0010-compact-index'").fetchone()
        migrated = _state(hive, conn)
    assert migrated == current == _rebuilt(hive)
    assert current["found"]["session pool"][0] == first
    for _author, log, _seq, commit, _kind, digest, scope, envelope in current["entries"]:
        whole = next(logs.read_entry(repo, commit) for repo in hive.stores() if commit in repo)
        assert digest == whole.hash and json.loads(scope) == whole.body["scope"]
        kept = json.loads(envelope)
        assert kept == (whole.signed if log == "roster" else {"body": {"record": whole.body["record"]}})
        assert envelope.encode() == canonical.dumps(kept)


def test_a_changed_text_deletes_exactly_what_the_old_one_indexed(hive: Hive) -> None:
    lesson = _add(hive, "Cookies expire after the gunicorn worker restarts")
    _edit(hive, lesson, "Sessions end when the broker reconnects")
    with fresh_index(hive) as (conn, _):
        state = _state(hive, conn)
    assert "gunicorn" not in state["terms"][lesson] and "broker" in state["terms"][lesson]
    assert state["stale"] is None and state == _rebuilt(hive)


def test_a_file_added_to_an_indexed_lesson_reindexes_it(hive: Hive) -> None:
    lesson = _add(hive, "The session pool leaks under gevent")
    with fresh_index(hive) as (conn, _):
        lesson_files.add(conn, lesson, {"app/web.py": lesson_files.VIA_COMMIT})  # as resolve_commits adds it
        lesson_text.refresh_fts(conn, {lesson})
        state = _state(hive, conn)
    assert "web" in state["terms"][lesson] and state["stale"] is None


def test_a_row_that_cannot_be_rebuilt_is_left_behind_then_rebuilt_away(hive: Hive,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    lessons = [_add(hive, f"Worker {n} drops the gevent socket") for n in range(3)]
    monkeypatch.setattr(lesson_text, "STALE_MIN", 2)
    with fresh_index(hive) as (conn, _):
        project = project_id(hive.project)
        for n, lesson in enumerate(lessons[:2]):
            # what the row indexed is gone behind the index's back: deleting it would corrupt the index
            conn.execute("UPDATE lesson_bodies SET text = 'changed' WHERE body_hash = "
                         "(SELECT body_hash FROM lesson_text WHERE lesson = ?)", (lesson,))
            lesson_text.drop_text(conn, lesson)
            lesson_text._compact_if_stale(conn)
            stale = conn.execute("SELECT value FROM meta WHERE key = 'lesson_fts_stale'").fetchone()
            assert stale == (("1",) if n == 0 else None)  # the second one passes the bound: rebuilt
            found = [r["id"] for r in recall.search(conn, "gevent socket", project=project)]
            assert lesson not in found and lessons[2] in found
        assert set(_terms(conn)) == {lessons[2]}
