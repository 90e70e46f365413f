"""Lesson lists and counts take admission's shortcut (gitive/index/admitted.py): they must show exactly what
``visible_lessons`` shows, whatever an attacker pushed: a stranger's lessons, an equivocating (quarantined)
log, entries inside a removed machine's membership gap or time gap, in any state, at tied times.

The index is real (its schema and views from ``gitive.index.db``); hypothesis fills the admission tables and
the lessons, and the reference is the view itself, queried the plain way.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitive.index import admitted, db
from gitive.lessons import catalog, summary

NOW = 1_800_000_000_000
HOUR = 3_600_000
MACHINES = [f"{c}" * 64 for c in "abcd"]  # d is never on the roster: a stranger
LOGS = ["team", "project-0123456789abcdef"]
STORED = ["proposed", "verified", "rejected", "superseded", "retracted"]
TABLES = ("entries", "members", "logs", "member_gaps", "member_time_gaps", "lessons", "lesson_status",
          "lesson_bodies", "lesson_stats", "reviews")


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sqlite3.Connection]:
    path = Path(tmp_path_factory.mktemp("admission")) / "index.sqlite"
    with db.connect(path) as conn:
        yield conn


lesson = st.tuples(st.sampled_from(MACHINES), st.sampled_from(LOGS), st.sampled_from(STORED),
                   st.integers(0, 60), st.sampled_from(["team", "project"]), st.booleans())
world = st.fixed_dictionaries({
    "members": st.lists(st.sampled_from(MACHINES[:3]), min_size=1, unique=True),
    "quarantined": st.lists(st.tuples(st.sampled_from(MACHINES), st.sampled_from(LOGS), st.integers(1, 6)),
                            max_size=3),
    "gaps": st.lists(st.tuples(st.sampled_from(MACHINES), st.sampled_from([*LOGS, "*"]), st.integers(0, 5),
                               st.none() | st.integers(1, 8), st.none() | st.integers(0, 60)), max_size=3),
    "time_gaps": st.lists(st.tuples(st.sampled_from(MACHINES), st.integers(0, 60), st.none() | st.integers(0, 60)),
                          max_size=2),
    "lessons": st.lists(lesson, min_size=1, max_size=25),
})


def _fill(conn: sqlite3.Connection, w: dict) -> None:
    for table in TABLES:
        conn.execute(f"DELETE FROM {table}")
    for i, machine in enumerate(w["members"]):
        conn.execute("INSERT INTO members VALUES (?,?,?,?,?,?,?,?,?)",
                     (machine, f"p{i}", f"m{i}", "member", 1, "[]", 0, "", 0))
    for machine, log, seq in w["quarantined"]:
        conn.execute("INSERT OR REPLACE INTO logs VALUES (?,?,?,?,?)", (machine, log, 9, "", seq))
    for n, (machine, log, lo, hi, t_hi) in enumerate(w["gaps"]):
        conn.execute("INSERT OR IGNORE INTO member_gaps VALUES (?,?,?,?,?,?)",
                     (machine, n, log, lo, None if hi is None else lo + hi, None if t_hi is None else NOW - t_hi * HOUR))
    for n, (machine, lo, hi) in enumerate(w["time_gaps"]):
        conn.execute("INSERT OR IGNORE INTO member_time_gaps VALUES (?,?,?,?)",
                     (machine, n, NOW - lo * HOUR, None if hi is None else NOW - lo * HOUR + hi * HOUR))
    seqs: dict[tuple[str, str], int] = {}
    for n, (machine, log, state, hours, scope, has_body) in enumerate(w["lessons"]):
        seq = seqs[(machine, log)] = seqs.get((machine, log), 0) + 1
        at = NOW - hours * HOUR - HOUR // 2  # never at the held boundary
        ident = f"{n:064x}"
        conn.execute("INSERT INTO entries VALUES (?,?,?,?,?,?,?,?,?,?)",
                     (machine, log, seq, f"{n:040x}", "lesson", at, scope, "{}", f"{n:064x}", 1))
        conn.execute("INSERT INTO lessons VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                     (ident, machine, log, seq, scope, "", "Gotcha", "[]", "[]", json.dumps(["t"]), None,
                      f"b{n}", 0, None, at))
        conn.execute("INSERT INTO lesson_status VALUES (?,?,?,?,?)", (ident, state, None, None, None))
        if has_body:
            conn.execute("INSERT INTO lesson_bodies VALUES (?,?,?,?,?,?)", (f"b{n}", ident, f"text {n}", "", None, None))
        if n % 3 == 0:
            conn.execute("INSERT INTO lesson_stats VALUES (?,?,?)", (ident, n, n // 2))


def _reference(conn: sqlite3.Connection) -> list[dict]:
    """Every lesson ``visible_lessons`` shows, read one by one (catalog.get), newest first, ties by id."""
    ids = [r[0] for r in conn.execute(
        "SELECT l.id FROM visible_lessons l JOIN members m ON m.machine = l.author ORDER BY l.at DESC, l.id DESC")]
    found = [catalog.get(conn, i) for i in ids]
    return [{k: v for k, v in f.items() if k not in ("reviews", "original_text", "retraction", "symptoms", "files")}
            for f in found]


SELECTIONS = [None, ("verified",), ("proposed", "held"), ("held",), ("proposed",), ("superseded", "verified", "retracted")]


@settings(max_examples=40)
@given(w=world, limit=st.integers(1, 8), offset=st.integers(0, 10))
def test_lists_and_counts_show_exactly_what_the_view_admits(index: sqlite3.Connection, w: dict, limit: int,
                                                            offset: int) -> None:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GITIVE_NOW_MS", str(NOW))
        _check(index, w, limit, offset)


def _check(index: sqlite3.Connection, w: dict, limit: int, offset: int) -> None:
    _fill(index, w)
    _compare(index, limit, offset)
    # and once more with only clean members' lessons left, where nothing needs an admission check
    index.execute(f"DELETE FROM entries WHERE author NOT IN {admitted._CLEAN}")
    index.execute(f"DELETE FROM lessons WHERE author NOT IN {admitted._CLEAN}")
    assert admitted.wholesale(index)
    _compare(index, limit, offset)


def _compare(index: sqlite3.Connection, limit: int, offset: int) -> None:
    fast = {r[0] for r in index.execute(f"SELECT l.id FROM lessons l WHERE {admitted.where(index, 'l')}")}
    exact = {r[0] for r in index.execute(f"SELECT l.id FROM lessons l WHERE {admitted.exact('l')}")}
    few = {r[0] for r in index.execute(f"SELECT l.id FROM lessons l WHERE {admitted.where(index, 'l', few=True)}")}
    assert fast == exact == few == {r[0] for r in index.execute("SELECT id FROM visible_lessons")}

    everything = _reference(index)
    for states in SELECTIONS:
        expected = [e for e in everything if states is None or e["state"] in states]
        assert catalog.listing(index, states=states, limit=limit, offset=offset) == expected[offset:offset + limit]
        for scope in ("team", "project"):
            assert catalog.listing(index, states=states, scope=scope, limit=limit) == [
                e for e in expected if e["scope"] == scope][:limit]

    assert summary.counts(index, NOW) == {s: sum(1 for e in everything if e["state"] == s) for s in catalog.STATES}


def test_the_shortcut_is_written_for_this_index_s_admission_rule(index: sqlite3.Connection) -> None:
    """A migration that changes ``admitted_entries`` makes the shortcut fall back to the view (still correct,
    slower): this fails so that whoever changed the rule brings gitive/index/admitted.py up to date."""
    assert admitted.view_digest(index) == admitted.KNOWN_VIEW
    assert admitted.where(index, "l") != admitted.exact("l")
    assert admitted.where(index, "l", few=True) != admitted.exact("l")
