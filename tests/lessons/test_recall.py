"""Recall over a real hive: lessons written with propose/review/retract in a clone, then searched.

Every lesson here is a signed entry in a real repository, read back through ``fresh_index``; the ranking
signals, labels and filters are checked on what ``search`` returns.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gitive.index import membership, project_links
from gitive.index.refresh import fresh_index
from gitive.lessons import recall
from gitive.lessons.propose import propose
from gitive.lessons.retract import retract
from gitive.lessons.review import review
from gitive.team.hive import Hive, open_hive
from gitive.team.projects import project_id
from testing import fixtures, people

FILES = ("src/db/migrate.py", "src/db/models.py", "src/web/app.py", "lib/migrate.py", "docs/setup.md")
DAY_MS = 86_400_000


@pytest.fixture
def hive(bare_remote: Path, make_clone: Callable[[str | Path, str], Path],
         monkeypatch: pytest.MonkeyPatch) -> Hive:
    """alice's clone with a few source files, a team founded in it, and its hive."""
    clone = make_clone(bare_remote, "alice")
    for name in FILES:
        fixtures.commit_file(clone, name, f"# {name}\n")
    fixtures.run_git(["push", "--quiet", "origin", "main"], cwd=clone)
    monkeypatch.chdir(clone)
    assert people.run_deciding(["init", "--person", "alice"]) == 0
    return open_hive(clone)


def cite(hive: Hive, lesson: str, *, successes: int, failures: int) -> None:
    """Signed citation records of ``lesson``, one per session, as ``capture.outcomes`` writes them."""
    from gitive.lessons.placement import place_like
    from gitive.store import logs

    with fresh_index(hive) as (conn, _):
        where = place_like(hive, conn, "project", project_id(hive.project))
    for n in range(successes + failures):
        logs.append(where.repo, hive.key, hive.team_id, where.log, where.scope,
                    {"type": "citation", "lesson": lesson, "session": f"session-{n}", "success": n < successes,
                     "tests_passed": n < successes, "reverted": False})


def add(hive: Hive, text: str, files: tuple[str, ...] = ("src/db/migrate.py",), *, scope: str = "project",
        approve: bool | None = True, applicability: str = "", tags: tuple[str, ...] = (),
        supersedes: str | None = None, days_ago: int = 0) -> str:
    """Propose a lesson (stamped ``days_ago``) and review it unless ``approve`` is None; return its id."""
    if days_ago:
        os.environ["GITIVE_NOW_MS"] = str(_now() - days_ago * DAY_MS)
    try:
        with fresh_index(hive) as (conn, _):
            made = propose(hive, conn, kind="Gotcha", text=text, applicability=applicability,
                           evidence=[f"file:{f}" for f in files], tags=list(tags), scope=scope,
                           supersedes=supersedes)
            if approve is not None:
                review(hive, conn, made.id, approved=approve, note="", signer=people.person_key())
    finally:
        os.environ.pop("GITIVE_NOW_MS", None)
    return made.id


def _now() -> int:
    from gitive.core.clock import now_ms

    return now_ms()


def find(hive: Hive, query: str, **kwargs: Any) -> list[dict[str, Any]]:
    kwargs.setdefault("project", project_id(hive.project))
    kwargs.setdefault("semantic", None)  # the lexical path (the dense one: test_recall_semantic.py)
    with fresh_index(hive) as (conn, _):
        return recall.search(conn, query, **kwargs)


def ids(results: list[dict[str, Any]]) -> list[str]:
    return [r["id"] for r in results]


# ------------------------------------------------------------------------------------------- ranking


def test_search_ranks_exact_file_then_same_directory_then_same_name(hive: Hive) -> None:
    other = add(hive, "Keep startup quick", ("src/web/app.py",))
    same_name = add(hive, "Keep startup quick", ("lib/migrate.py",))
    same_dir = add(hive, "Keep startup quick", ("src/db/models.py",))
    exact = add(hive, "Keep startup quick", ("src/db/migrate.py",))
    found = find(hive, "", files=["src/db/migrate.py"])
    assert ids(found) == [exact, same_dir, same_name]
    assert other not in ids(found)
    assert found[0]["reasons"][0] == "cites src/db/migrate.py"
    assert "same directory" in found[1]["reasons"][0]
    assert "same file name" in found[2]["reasons"][0]


def test_search_file_overlap_lifts_a_lesson_over_an_equal_text_match(hive: Hive) -> None:
    elsewhere = add(hive, "Migrations need a fresh database", ("docs/setup.md",))
    cited = add(hive, "Migrations need a fresh database", ("src/db/migrate.py",))
    assert ids(find(hive, "migrations", files=["src/db/migrate.py"])) == [cited, elsewhere]
    assert ids(find(hive, "migrations", files=["./docs/setup.md"])) == [elsewhere, cited]


def test_search_ranks_narrower_scope_first(hive: Hive) -> None:
    team = add(hive, "Vacuum the database weekly", scope="team")
    personal = add(hive, "Vacuum the database weekly", scope="personal")
    project = add(hive, "Vacuum the database weekly", scope="project")
    found = find(hive, "vacuum database")
    assert ids(found) == [personal, project, team]
    assert [r["scope"] for r in found] == ["personal", "project", "team"]
    assert "personal lesson (narrowest scope)" in found[0]["reasons"]


def test_search_text_relevance_outweighs_scope(hive: Hive) -> None:
    strong = add(hive, "Postgres vacuum blocks migrations; run vacuum before migrating", scope="team",
                 applicability="Slow postgres migrations")
    weak = add(hive, "Document every environment variable", scope="personal", tags=("postgres",))
    assert ids(find(hive, "postgres migrations slow vacuum")) == [strong, weak]


def test_search_prefers_successful_lessons_then_newer_ones(hive: Hive) -> None:
    old = add(hive, "Pin the compiler version", ("src/db/migrate.py",), days_ago=200)
    new = add(hive, "Pin the compiler version", ("src/db/models.py",))
    assert ids(find(hive, "pin compiler version")) == [new, old]
    cite(hive, old, successes=5, failures=0)
    cite(hive, new, successes=0, failures=4)
    found = find(hive, "pin compiler version")
    assert ids(found) == [old, new]
    assert found[0]["outcome_rate"] == pytest.approx(6 / 7)
    assert "outcome: 5 of 5 citing sessions succeeded" in found[0]["reasons"]
    assert found[1]["outcome_rate"] == pytest.approx(1 / 6)


def test_search_result_carries_provenance_and_reasons(hive: Hive) -> None:
    lesson = add(hive, "Run migrations with --fake-initial on fresh databases",
                 applicability="Setting up a new database", tags=("db",))
    (found,) = find(hive, "fresh database setup", files=["src/db/migrate.py"])
    assert found["id"] == lesson
    assert (found["origin"], found["reviewer"], found["verified"], found["state"]) == ("alice", "alice", True,
                                                                                       "verified")
    assert found["author"] == "alice" and found["label"] is None and found["hypothesis"] is False
    assert found["text"] == "Run migrations with --fake-initial on fresh databases"
    assert found["applicability"] == "Setting up a new database"
    assert found["tags"] == ["db"] and found["files"] == ["src/db/migrate.py"]
    assert found["age_days"] == 0 and found["score"] > 0 and found["stale"] is None
    # "setup" is one word and "Setting up" two: FTS5 did not match it, and the reason does not claim it
    assert found["reasons"][:2] == ["text matches fresh, database", "cites src/db/migrate.py"]


def test_search_shows_the_reviewers_edit(hive: Hive) -> None:
    with fresh_index(hive) as (conn, _):
        made = propose(hive, conn, kind="Gotcha", text="Migrations are slow", evidence=["file:src/db/migrate.py"])
        review(hive, conn, made.id, approved=True, text="Migrations are slow on the big tables; batch them",
               signer=people.person_key())
    (found,) = find(hive, "migrations")
    assert found["text"] == "Migrations are slow on the big tables; batch them"


# ---------------------------------------------------------------------------------------- lifecycle


def test_search_never_returns_superseded_retracted_or_rejected_lessons(hive: Hive) -> None:
    old = add(hive, "Migrations: run them by hand")
    new = add(hive, "Migrations: run them with make migrate", supersedes=old)
    gone = add(hive, "Migrations: never run them on Fridays")
    rejected = add(hive, "Migrations: skip them in tests", approve=False)
    with fresh_index(hive) as (conn, _):
        retract(hive, conn, gone, "wrong", people.person_key())
    for include_proposed in (False, True):
        assert ids(find(hive, "migrations", include_proposed=include_proposed)) == [new]
        assert ids(find(hive, "", files=["src/db/migrate.py"], include_proposed=include_proposed)) == [new]
    assert not {old, gone, rejected} & set(ids(find(hive, "run migrations hand fridays tests", limit=50)))


def test_search_returns_proposed_lessons_only_when_asked_and_labels_them(hive: Hive) -> None:
    verified = add(hive, "Cache the dependency download")
    proposed = add(hive, "Cache the dependency download step", approve=None)
    held = add(hive, "Cache the dependency download folder", approve=None, days_ago=2)
    assert ids(find(hive, "cache dependency download")) == [verified]
    found = {r["id"]: r for r in find(hive, "cache dependency download", include_proposed=True)}
    assert set(found) == {verified, proposed, held}
    assert (found[proposed]["state"], found[proposed]["verified"], found[proposed]["reviewer"]) == (
        "proposed", False, None)
    assert found[proposed]["label"] == recall.LABEL_PROPOSED == "proposed — not reviewed"
    assert (found[held]["state"], found[held]["label"]) == ("held", recall.LABEL_HELD)
    assert found[verified]["label"] is None


def test_search_labels_another_projects_lesson_a_hypothesis(hive: Hive) -> None:
    here = project_id(hive.project)
    mine = add(hive, "Bump the schema version with every migration")
    # The same repository under another remote is another project: its lessons are borrowed here.
    fixtures.run_git(["remote", "set-url", "origin", "https://example.test/acme/other.git"], cwd=hive.project.workdir)
    other = project_id(open_hive(hive.project.workdir).project)
    assert other != here
    found = find(hive, "schema version migration", project=other)
    assert ids(found) == [mine]
    assert found[0]["hypothesis"] is True and found[0]["label"] == recall.LABEL_HYPOTHESIS
    assert found[0]["project"] == here
    assert find(hive, "schema version migration", project=here)[0]["label"] is None
    assert find(hive, "schema version migration", project=None)[0]["hypothesis"] is False
    # Linked by an admin (`gitive project move`), the moved repository is its old project: nothing is borrowed.
    moved = open_hive(hive.project.workdir)
    with fresh_index(moved) as (conn, _):
        moved_from = project_links.moved_from(moved)
        assert moved.project_id == other and moved_from is not None and moved_from[0] == here, moved_from
        project_links.link(moved, conn, here, people.person_key(), _now())
    with fresh_index(moved):
        assert moved.project_id == here and project_links.moved_from(moved) is None
    (linked,) = find(moved, "schema version migration", project=moved.project_id)
    assert linked["id"] == mine and linked["label"] is None and linked["hypothesis"] is False


def test_search_ranks_this_projects_lesson_over_a_borrowed_one(hive: Hive) -> None:
    borrowed = add(hive, "Bump the schema version with every migration")
    fixtures.run_git(["remote", "set-url", "origin", "https://example.test/acme/other.git"], cwd=hive.project.workdir)
    moved = open_hive(hive.project.workdir)
    with fresh_index(moved) as (conn, _):  # a project nobody owns counts no review: the admin takes it first
        membership.confirm(moved, conn, "alice", owner=True, signer=people.person_key())
    local = add(moved, "Bump the schema version with every migration")
    found = find(moved, "schema version migration", include_proposed=True)
    assert ids(found)[:2] == [local, borrowed]
    assert [r["label"] for r in found[:2]] == [None, recall.LABEL_HYPOTHESIS]


def test_search_after_a_link_reads_the_old_projects_lessons_as_this_ones(hive: Hive) -> None:
    here = project_id(hive.project)
    before = add(hive, "Bump the schema version with every migration")
    fixtures.run_git(["remote", "set-url", "origin", "https://example.test/acme/renamed.git"], cwd=hive.project.workdir)
    moved = open_hive(hive.project.workdir)
    with fresh_index(moved) as (conn, _):
        project_links.link(moved, conn, here, people.person_key(), _now())
    after = add(moved, "Bump the schema version with every migration, then run it")  # written as the old project
    found = find(moved, "schema version migration", project=moved.project_id, include_proposed=True)
    assert set(ids(found)) == {before, after} and moved.project_id == here
    assert [r["label"] for r in found] == [None, None]  # both this project's, and its owner's reviews count
    assert {r["state"] for r in found} == {"verified"}


def test_search_flags_stale_evidence_after_the_cited_file_changes(hive: Hive) -> None:
    add(hive, "The migration runner needs a lock", ("src/db/migrate.py", "src/db/models.py"))
    (fresh,) = find(hive, "migration runner", repo=hive.project)
    assert fresh["stale"] == []
    fixtures.commit_file(Path(hive.project.workdir), "src/db/migrate.py", "# rewritten\n")
    (changed,) = find(hive, "migration runner", repo=hive.project)
    assert changed["stale"] == ["src/db/migrate.py"]
    (unchecked,) = find(hive, "migration runner")
    assert unchecked["stale"] is None


# ------------------------------------------------------------------------------- queries and paging


INJECTIONS = ['"', '""', '"migrations', "migrations\"", "(", ")", "((migrations", "NEAR", "NEAR(migrations db)",
              "migrations NEAR/2 db", "*", "migr*", "-migrations", "- -", ":", "text:migrations",
              "lesson:x", "{text tags}: migrations", "AND", "OR", "NOT migrations", "migrations AND OR NOT",
              "^migrations", "+", "'", "migrations'); DROP TABLE lessons; --", "\x00", "\u0301", "_", "__",
              "é", "迁移", "🙂 migrations", "a" * 5000, "migrations " * 100]


def test_search_reads_fts_syntax_as_plain_words(hive: Hive) -> None:
    lesson = add(hive, "Migrations need a fresh database")
    with fresh_index(hive) as (conn, _):
        for query in INJECTIONS:
            found = recall.search(conn, query)
            expected = [lesson] if "migr" in query.lower() else []  # "migr" is a prefix of it
            assert ids(found) == expected, f"query {query[:40]!r}"


@given(st.text(max_size=200))
def test_match_expression_is_valid_fts5_for_any_text(text: str) -> None:
    expression = recall.match_expression(recall.tokens(text))
    if expression is not None:
        _FTS.execute("SELECT count(*) FROM lesson_fts WHERE lesson_fts MATCH ?", (expression,)).fetchone()


def _fts_table() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE lesson_fts USING fts5(lesson UNINDEXED, text, applicability, tags, "
                 "tokenize = 'porter unicode61')")
    conn.execute("INSERT INTO lesson_fts VALUES ('x', 'near and or not migrations', '', '')")
    return conn


_FTS = _fts_table()


def test_tokens_drop_stop_words_and_repeats() -> None:
    assert recall.tokens("How do I fix the FLAKY test? the flaky_test, once more!") == ["fix", "flaky", "test"]
    assert recall.tokens("why is it") == []


def test_match_expression_quotes_prefixes_and_expands_abbreviations() -> None:
    assert recall.match_expression(["db", "migrations", 'a"b']) == '"db" OR "database"* OR "migrations"* OR "a""b"'
    assert recall.match_expression([]) is None


def test_file_overlap_weights() -> None:
    assert recall.file_overlap(["a/b.py"], ["a/b.py"]) == (1.0, ["cites a/b.py"])
    assert recall.file_overlap(["a/c.py"], ["a/b.py"])[0] == recall.FILE_DIR
    assert recall.file_overlap(["z/b.py"], ["a/b.py"])[0] == recall.FILE_NAME
    assert recall.file_overlap(["x.py"], ["y.py"]) == (0.0, [])
    assert recall.file_overlap(["a/b.py", "a/c.py"], ["a/b.py", "a/c.py"])[0] == 1.25


def test_search_sees_lessons_added_after_an_earlier_search(hive: Hive) -> None:
    first = add(hive, "Models need explicit table names", ("src/db/models.py",))
    assert ids(find(hive, "", files=["src/db/models.py"])) == [first]
    second = add(hive, "Models keep their indexes in __table_args__", ("src/db/models.py",))
    assert set(ids(find(hive, "", files=["src/db/models.py"]))) == {first, second}


def test_search_after_the_index_is_rebuilt(hive: Hive) -> None:
    from gitive.index.refresh import rebuild

    lesson = add(hive, "Models need explicit table names", ("src/db/models.py",))
    assert ids(find(hive, "", files=["src/db/models.py"])) == [lesson]
    rebuild(hive)
    other = add(hive, "The web app reloads on change", ("src/web/app.py",))
    assert ids(find(hive, "", files=["src/db/models.py"])) == [lesson]
    assert ids(find(hive, "", files=["src/web/app.py"])) == [other]


def test_search_with_empty_query_returns_lessons_by_file_overlap_only(hive: Hive) -> None:
    lesson = add(hive, "Models need explicit table names", ("src/db/models.py",))
    add(hive, "The web app reloads on change", ("src/web/app.py",))
    assert ids(find(hive, "", files=["src/db/models.py"])) == [lesson]
    assert find(hive, "") == []
    assert find(hive, "how do I do it") == []
    assert ids(find(hive, "the", files=["src/db/models.py"])) == [lesson]


@pytest.fixture
def many(hive: Hive) -> list[str]:
    return [add(hive, f"Deploy step {n}: restart the queue workers" + " again" * (n % 4),
                (FILES[n % len(FILES)],), days_ago=n % 3) for n in range(23)]


def test_search_pages_are_stable_and_disjoint(hive: Hive, many: list[str]) -> None:
    whole = ids(find(hive, "restart queue workers", files=["src/db/migrate.py"], limit=50))
    assert sorted(whole) == sorted(many)
    pages = [ids(find(hive, "restart queue workers", files=["src/db/migrate.py"], limit=7, offset=o))
             for o in (0, 7, 14, 21)]
    assert [len(p) for p in pages] == [7, 7, 7, 2]
    assert [i for page in pages for i in page] == whole
    assert find(hive, "restart queue workers", limit=7, offset=23) == []
    assert find(hive, "restart queue workers", limit=0) == []
    assert ids(find(hive, "restart queue workers", limit=50)) == ids(find(hive, "restart queue workers", limit=50))
