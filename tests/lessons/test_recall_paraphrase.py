"""Recall that survives paraphrase: commit files, identifiers, task-shaped questions, symptoms, rephrasings,
files many lessons cite, and indexed lookups only (issues 9 and 13). Real hives, written with propose/review."""

from __future__ import annotations

import os
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitive.cli.main import run
from gitive.core import canonical
from gitive.core.ids import record_id
from gitive.errors import InvalidRecord
from gitive.index import lesson_files, words
from gitive.index.refresh import fresh_index
from gitive.lessons import model, recall
from gitive.lessons.propose import propose
from gitive.lessons.review import review
from gitive.team.hive import Hive, open_hive
from gitive.team.projects import project_id
from testing import fixtures, people

FILES = ("app/db/session.py", "app/db/models.py", "app/web/views.py", "app/settings.py", "README.md")


@pytest.fixture
def hive(bare_remote: Path, make_clone: Callable[[str | Path, str], Path], monkeypatch: pytest.MonkeyPatch) -> Hive:
    clone = make_clone(bare_remote, "alice")
    for name in FILES:
        fixtures.commit_file(clone, name, f"# {name}\n")
    fixtures.run_git(["push", "--quiet", "origin", "main"], cwd=clone)
    monkeypatch.chdir(clone)
    assert people.run_deciding(["init", "--person", "alice"]) == 0
    return open_hive(clone)


def add(hive: Hive, text: str, evidence: tuple[str, ...] = ("file:README.md",), *, applicability: str = "",
        symptoms: tuple[str, ...] = (), approve: bool = True) -> str:
    with fresh_index(hive) as (conn, _):
        made = propose(hive, conn, kind="Gotcha", text=text, applicability=applicability, evidence=list(evidence),
                       symptoms=list(symptoms))
        if approve:
            review(hive, conn, made.id, approved=True, note="", signer=people.person_key())
    return made.id


def find(hive: Hive, query: str, **kwargs: Any) -> list[dict[str, Any]]:
    kwargs.setdefault("project", project_id(hive.project))
    kwargs.setdefault("semantic", None)  # the lexical path (the dense one: test_recall_semantic.py)
    with fresh_index(hive) as (conn, _):
        return recall.search(conn, query, **kwargs)


def ids(found: list[dict[str, Any]]) -> list[str]:
    return [r["id"] for r in found]


# ------------------------------------------------------------------------------------- commit evidence


def test_commit_evidence_gives_the_lesson_the_files_that_commit_changed(hive: Hive) -> None:
    clone = Path(hive.project.workdir)
    commit = fixtures.commit_file(clone, "app/billing/invoice.py", "# invoices\n", "round invoices per line")
    lesson = add(hive, "Round each invoice line before summing", (f"commit:{commit}",))
    (found,) = find(hive, "", files=["app/billing/invoice.py"])
    assert found["id"] == lesson and found["files"] == ["app/billing/invoice.py"]
    assert any("cites app/billing/invoice.py" in reason for reason in found["reasons"])
    (item,) = found["evidence"]
    assert item["kind"] == "commit" and item["files"] == ["app/billing/invoice.py"]


def test_a_lesson_proposed_before_commits_carried_files_gets_them_from_the_repository(hive: Hive) -> None:
    """Old records read: a commit evidence item without ``files`` is resolved from a local repository."""
    from gitive.lessons import model as lesson_model
    from gitive.store import bodies, logs

    clone = Path(hive.project.workdir)
    commit = fixtures.commit_file(clone, "app/billing/tax.py", "# tax\n", "tax per region")
    item = {"kind": "commit", "ref": commit, "digest": "0" * 64}  # the shape written before December
    scope = {"project": project_id(hive.project)}
    lesson = lesson_model.lesson_id(hive.me, scope, "Gotcha", "Tax is per region", "", None, [item])
    body = lesson_model.body("Tax is per region", "", None)
    digest = lesson_model.body_hash(lesson, body)
    bodies.put(hive.project, hive.key, hive.team_id, digest, lesson_model.body_bytes(body))
    logs.append(hive.project, hive.key, hive.team_id, "project", scope,
                {"type": "lesson", "id": lesson, "kind": "Gotcha", "evidence": [item], "tags": [],
                 "body_hash": digest, "hearsay": False})
    assert ids(find(hive, "", files=["app/billing/tax.py"], include_proposed=True)) == [lesson]


# ----------------------------------------------------------------------------------------- identifiers


def test_identifiers_are_split_on_both_sides(hive: Hive) -> None:
    camel = add(hive, "Enable compareServerDefault in env.py or autogenerate misses default changes")
    plain = add(hive, "Fetch the user profile once per request and pass it down")
    assert ids(find(hive, "server default compare"))[:1] == [camel]
    assert ids(find(hive, "why is fetchUserProfile slow"))[:1] == [plain]


def test_split_identifier_parts() -> None:
    assert words.split_identifier("HTTPServerError") == ["http", "server", "error"]
    assert words.split_identifier("parseJSON2") == ["parse", "json", "2"]
    assert words.split_identifier("plain") == []
    assert words.tokens("fakeInitial flag") == ["fakeinitial", "fake", "initial", "flag"]
    assert words.identifier_parts("use getUserById and snake_case") == ["get", "user", "by", "id"]


@pytest.mark.parametrize(("question", "task"), [
    ("add a shipping fee column to orders", True), ("I need to migrate the users table", True),
    ("how do I set up the bff", True), ("implement refunds", True),
    ("why does the migration fail", False), ("TypeError: can't compare offset-naive", False),
    ("customers were charged twice", False), ("add fails with a 500 error", False), ("", False),
])
def test_task_shaped_questions(question: str, task: bool) -> None:
    assert words.task_shaped(question) is task


def test_a_task_shaped_question_weighs_applicability(hive: Hive) -> None:
    about_when = add(hive, "New columns must be nullable or have a server default",
                     applicability="Adding a column to a table that has rows")
    about_words = add(hive, "The column order of the CSV export is fixed; add new fields at the end",
                      applicability="Changing exports")
    assert ids(find(hive, "add a column to the table"))[0] == about_when
    assert about_words in ids(find(hive, "add a column to the table"))


# --------------------------------------------------------------------------------------------- symptoms


def test_symptoms_are_stored_in_the_body_and_found(hive: Hive) -> None:
    lesson = add(hive, "Pin the broker client; 5.x drops idle links", symptoms=("ECONNRESET while publishing",
                                                                                "why do messages vanish at night"))
    assert ids(find(hive, "ECONNRESET")) == [lesson]
    assert ids(find(hive, "messages vanish overnight")) == [lesson]
    with fresh_index(hive) as (conn, _):
        (stored,) = conn.execute("SELECT b.symptoms FROM lessons l JOIN lesson_bodies b ON b.body_hash = l.body_hash "
                                 "WHERE l.id = ?", (lesson,)).fetchone()
    assert stored == '["ECONNRESET while publishing", "why do messages vanish at night"]'


def test_a_lesson_without_symptoms_keeps_its_id_and_body_bytes() -> None:
    scope = {"team": True}
    evidence = [{"kind": "file", "ref": "x:a", "digest": "0" * 64}]
    assert model.lesson_id("m" * 64, scope, "Gotcha", "t", "a", None, evidence) == record_id(
        "m" * 64, scope, "Gotcha", "t", "a", None, evidence)
    assert model.lesson_id("m" * 64, scope, "Gotcha", "t", "a", None, evidence, []) == record_id(
        "m" * 64, scope, "Gotcha", "t", "a", None, evidence)
    assert model.lesson_id("m" * 64, scope, "Gotcha", "t", "a", None, evidence, ["boom"]) != record_id(
        "m" * 64, scope, "Gotcha", "t", "a", None, evidence)
    assert model.body_bytes(model.body("t", "a", None)) == canonical.dumps({"text": "t", "applicability": "a",
                                                                          "quote": None})


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=400), max_size=12))
def test_symptoms_are_cleaned_or_refused_never_stored_out_of_bounds(raw: list[str]) -> None:
    from gitive.lessons.rules import clean_symptoms

    try:
        cleaned = clean_symptoms(raw)
    except InvalidRecord as exc:
        assert "symptom" in str(exc)
        return
    assert len(cleaned) <= model.MAX_SYMPTOMS and len(set(cleaned)) == len(cleaned)
    assert all(0 < len(s) <= model.MAX_SYMPTOM and "\n" not in s and s == s.strip() for s in cleaned)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.sampled_from(["text", "applicability", "quote", "symptoms", "extra"]),
                       st.one_of(st.none(), st.text(max_size=50), st.lists(st.text(max_size=400), max_size=10),
                                 st.integers()), max_size=5))
def test_a_peer_body_with_bad_symptoms_is_refused(value: dict[str, Any]) -> None:
    """Whatever a peer puts in a body, parse_body accepts only the documented shapes."""
    from gitive.index.bodies import parse_body

    try:
        parsed = parse_body(canonical.dumps(value))
    except (InvalidRecord, ValueError):
        return
    assert {"text", "applicability", "quote"} <= parsed.keys() <= {"text", "applicability", "quote", "symptoms"}
    symptoms = parsed.get("symptoms", [])
    assert isinstance(symptoms, list) and len(symptoms) <= model.MAX_SYMPTOMS
    assert all(isinstance(s, str) and 0 < len(s) <= model.MAX_SYMPTOM for s in symptoms)


# ----------------------------------------------------------------------------------------- rephrasings


def test_a_rephrasing_finds_what_the_question_alone_misses(hive: Hive) -> None:
    lesson = add(hive, "Webhook signatures are computed over the raw request body")
    add(hive, "Callbacks from the shop are retried three times")
    assert lesson not in ids(find(hive, "partner notifications refused as forged"))
    found = find(hive, "partner notifications refused as forged", rephrasings=["webhook signature mismatch"])
    assert ids(found)[0] == lesson


def test_fusion_prefers_a_lesson_every_phrasing_finds() -> None:
    one = {"a": 3.0, "b": 2.0, "c": 1.0}
    two = {"b": 5.0, "a": 1.0}
    fused = recall.fuse([one, two])
    assert max(fused, key=lambda k: fused[k]) in ("a", "b") and fused["c"] < min(fused["a"], fused["b"])
    assert recall.fuse([{"x": 2.0, "y": 1.0}]) == {"x": 1.0, "y": 0.5}  # one ranking keeps its magnitudes
    assert recall.fuse([]) == {} and recall.fuse([{}, {}]) == {}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from("abcdefgh"), st.floats(0.01, 100), max_size=8), max_size=5))
def test_fused_scores_stay_between_zero_and_one(rankings: list[dict[str, float]]) -> None:
    fused = recall.fuse(rankings)
    assert all(0 < v <= 1.0 + 1e-9 for v in fused.values())
    assert set(fused) == {k for r in rankings for k in r}


def test_rephrasings_are_capped_and_blank_ones_ignored(hive: Hive) -> None:
    lesson = add(hive, "Webhook signatures are computed over the raw request body")
    many = ["", "   "] + [f"unrelated {n}" for n in range(10)] + ["webhook signature"]
    assert lesson not in ids(find(hive, "nothing here", rephrasings=many))  # the fifth and later are dropped
    assert ids(find(hive, "nothing here", rephrasings=["", "webhook signature"])) == [lesson]


# ---------------------------------------------------------------------------- files many lessons cite


def test_a_file_many_lessons_cite_counts_less_than_a_rare_one(hive: Hive) -> None:
    for n in range(6):
        add(hive, f"Settings note {n}: keys are read once", ("file:app/settings.py",))
    rare = add(hive, "Sessions are opened per request", ("file:app/db/session.py",))
    common = add(hive, "Settings note: the session cookie name lives here", ("file:app/settings.py",))
    found = find(hive, "session", files=["app/settings.py", "app/db/session.py"])
    assert ids(found)[0] == rare and common in ids(found)
    assert lesson_files.rarity(1, 100) == 1.0 and lesson_files.rarity(50, 100) < lesson_files.rarity(5, 100)
    assert lesson_files.rarity(100, 100) >= 0.25


def test_a_busy_file_contributes_only_its_newest_citing_lessons(hive: Hive, monkeypatch: pytest.MonkeyPatch) -> None:
    """Scoring reads a bounded number of rows per matched path: the newest citing lessons of a busy file, and a
    share of the budget for the files merely near one; a lesson outside the bound still gets its overlap when
    the text finds it."""
    from gitive.capture import matching

    old = [add(hive, f"Settings note {n}: keys are read once", ("file:app/settings.py",)) for n in range(3)]
    new = [add(hive, f"Settings note {n}: keys are read at start", ("file:app/settings.py",)) for n in range(3, 6)]
    near = add(hive, "Models keep their own settings", ("file:app/db/models.py",))
    monkeypatch.setattr(lesson_files, "EXACT_READ", 3)
    monkeypatch.setattr(lesson_files, "NEAR_READ", 1)
    monkeypatch.setattr(lesson_files, "NEAR_READ_MIN", 1)
    project = project_id(hive.project)
    with fresh_index(hive) as (conn, _):
        weighted = lesson_files.weights(conn, ["app/settings.py"])
        best = lesson_files.candidates(conn, weighted, 50)
        assert set(best) == set(new)
        assert set(lesson_files.candidates(conn, lesson_files.weights(conn, ["app/db/session.py"]), 50)) == {near}
        # a lesson past the bound still gets the same overlap, read through its own cited paths
        assert lesson_files.overlap_of(conn, weighted, [old[0]]) == {old[0]: best[new[0]]}
        hook = matching.for_files_or_error(conn, ["app/settings.py"], None, project, set(), limit=10)
        assert {c.id for c in hook} == set(new)
    found = find(hive, "keys are read once", files=["app/settings.py"])
    assert set(old) <= set(ids(found))  # the text finds the older ones, and their overlap is counted
    assert all("files" in " ".join(r["reasons"]) or "cites" in " ".join(r["reasons"]) for r in found
               if r["id"] in old)


# --------------------------------------------------------------------------------- indexed lookups only

# What may be scanned: the JSON lists of candidates, CTEs over them, the FTS5 match, SQLite's one-row-per-table
# sqlite_sequence and its schema (sqlite_master: which admission rule the index holds, gitive/index/admitted.py)
# (and the roster's few rows, aliased m, which a CTE of FTS matches shares its name with). Anything else is a
# table walked row by row.
_SCAN = re.compile(r"\bSCAN (\w+)")
_MAY_SCAN = {"j", "json_each", "q", "top", "per", "scored", "m", "lesson_fts", "sqlite_sequence", "sqlite_master"}


def _plans(conn: sqlite3.Connection, call: Callable[[], Any]) -> list[str]:
    """Every statement ``call`` runs on ``conn``, with its query plan."""
    seen: list[str] = []
    conn.set_trace_callback(seen.append)
    try:
        call()
    finally:
        conn.set_trace_callback(None)
    plans = []
    for sql in seen:
        if not sql.lstrip().upper().startswith(("SELECT", "WITH")) or "'lesson_fts_" in sql:
            continue  # not a read, or FTS5 reading its own small config and structure tables
        try:
            rows = conn.execute("EXPLAIN QUERY PLAN " + sql).fetchall()
        except sqlite3.Error:
            continue
        plans.append(sql + "\n" + "\n".join(r[-1] for r in rows))
    return plans


def test_search_and_the_hook_never_scan_a_lesson_table(hive: Hive) -> None:
    from gitive.capture import matching

    for n in range(4):
        add(hive, f"Sessions leak when the pool is small, case {n}", (f"file:{FILES[n]}",), symptoms=("pool timeout",))
    project = project_id(hive.project)
    with fresh_index(hive) as (conn, _):
        plans = _plans(conn, lambda: recall.search(conn, "session pool timeout", files=list(FILES[:3]),
                                                   project=project, rephrasings=["connection pool exhausted"]))
        plans += _plans(conn, lambda: matching.for_files_or_error(conn, ["app/db/session.py"], "pool timeout",
                                                                   project, set(), limit=3))
        plans += _plans(conn, lambda: matching.for_card(conn, ["app/db/models.py"], project))
    assert len(plans) >= 6, plans
    scans = [p for p in plans if set(_SCAN.findall(p)) - _MAY_SCAN]
    assert not scans, "\n\n".join(scans)


def test_the_index_migrates_an_old_file_in_place(tmp_path: Path) -> None:
    """An index written by the previous schema (text in lesson_text and lesson_fts) gains lesson_files and the
    new search index for the lessons it already holds."""
    from gitive.index import db

    path = tmp_path / "index.sqlite"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("CREATE TABLE migrations(name TEXT PRIMARY KEY, at INTEGER NOT NULL)")
    for name, script in db.MIGRATIONS[:4]:
        for statement in str(script).split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.execute("INSERT INTO migrations VALUES (?, 1)", (name,))
    evidence = '[{"kind": "file", "ref": "c:app/db/session.py", "path": "app/db/session.py", "digest": "' + "0" * 64 + '"}]'
    conn.execute("INSERT INTO lessons VALUES ('L1','m','project',1,'team','', 'Gotcha', ?, 'app/db/session.py', "
                 "'[]', NULL, 'B1', 0, NULL, 5)", (evidence,))
    conn.execute("INSERT INTO lesson_bodies VALUES ('B1', 'L1', 'Sessions leak when the pool is small', '', NULL)")
    conn.execute("INSERT INTO lesson_fts VALUES ('L1', 'Sessions leak when the pool is small', '', '')")
    conn.execute("INSERT INTO lesson_text VALUES ('L1', 1, 'Sessions leak when the pool is small', '')")
    conn.close()
    with db.connect(path) as conn:
        assert conn.execute("SELECT p.path FROM lesson_files f JOIN paths p ON p.id = f.path").fetchall() == [
            ("app/db/session.py",)]
        (rowid,) = conn.execute("SELECT fts_rowid FROM lesson_text WHERE lesson = 'L1'").fetchone()
        assert conn.execute("SELECT rowid FROM lesson_fts WHERE lesson_fts MATCH 'pool'").fetchall() == [(rowid,)]
        assert lesson_files.candidates(conn, lesson_files.weights(conn, ["app/db/session.py"]), 5) == {"L1": 1.0}


def test_proposing_refuses_too_many_or_too_long_symptoms(hive: Hive) -> None:
    with pytest.raises(InvalidRecord, match="at most 8"):
        add(hive, "x", symptoms=tuple(f"s{n}" for n in range(9)))
    with pytest.raises(InvalidRecord, match="the limit is 300"):
        add(hive, "x", symptoms=("e" * 301,))
    with fresh_index(hive) as (conn, _):
        assert conn.execute("SELECT count(*) FROM lessons").fetchone() == (0,)


def test_the_cli_takes_symptoms_and_rephrasings(hive: Hive, capsys: pytest.CaptureFixture[str]) -> None:
    os.environ.pop("GITIVE_RECALL_MODEL", None)
    assert run(["lessons", "propose", "--kind", "Gotcha", "--text", "Pin the broker client",
                "--evidence", "file:README.md", "--symptom", "ECONNRESET while publishing"]) == 0
    lesson = capsys.readouterr().out.strip()
    assert run(["lessons", "search", "unrelated words", "--rephrase", "ECONNRESET", "--proposed", "--json"]) == 0
    assert lesson in capsys.readouterr().out


def test_words_most_lessons_contain_are_left_out_of_the_query(hive: Hive, monkeypatch: pytest.MonkeyPatch) -> None:
    from gitive.index import lesson_terms

    common = [add(hive, f"The session pool is shared, note {n}") for n in range(4)]
    rare = add(hive, "The session pool leaks sockets under gevent")
    with fresh_index(hive) as (conn, _):
        counts = lesson_terms.frequencies(conn, ["session", "pool", "gevent", "sock"], recall.PREFIX_MIN)
        assert counts == {"session": 5, "pool": 5, "gevent": 1, "sock": 1}  # "sock" as a prefix of "sockets"
        monkeypatch.setattr(recall, "MIN_TO_PRUNE", 1)
        total = lesson_terms.shown(conn)
        asked = ["session", "pool", "gevent", "leaks"]
        counts = lesson_terms.frequencies(conn, asked, recall.PREFIX_MIN)
        assert recall._telling(asked, counts, total) == ["gevent", "leaks"]
        assert recall._telling(["session", "pool"], counts, total) == ["session", "pool"]  # too few would remain
        assert recall._telling(asked, None, total) == asked  # frequencies unknown (a query_only connection)
        found = [r["id"] for r in recall.search(conn, "session pool gevent leaks", project=project_id(hive.project),
                                                   semantic=None)]
    assert found == [rare]  # the common words no longer pull in the other lessons
    assert set(common).isdisjoint(found)
