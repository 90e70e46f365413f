"""The hook's read of the index: read-only, safe against any error text, verified lessons only."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitive.capture import locate, matching

from .support import TeamRepo


def index_of(repo: TeamRepo) -> Path:
    found = locate.find(repo.path)
    assert found is not None
    return locate.index_path(found)


def test_the_index_is_opened_read_only(team_repo: TeamRepo) -> None:
    conn = matching.connect(index_of(team_repo))
    assert conn is not None
    with pytest.raises(sqlite3.OperationalError, match=r"readonly|read-only"):
        conn.execute("DELETE FROM lessons")
    conn.close()


def test_a_missing_index_is_none(tmp_path: Path) -> None:
    assert matching.connect(tmp_path / "gitive" / "index.sqlite") is None
    assert not (tmp_path / "gitive").exists()


@pytest.mark.parametrize("name", ["c#-shop", "what?shop", "a%20b"])
def test_an_index_under_a_path_with_uri_characters_is_read(team_repo: TeamRepo, tmp_path: Path,
                                                           name: str) -> None:
    odd = tmp_path / name / "index.sqlite"
    odd.parent.mkdir()
    shutil.copy(index_of(team_repo), odd)
    stray = tmp_path / name.split("#")[0].split("?")[0]
    conn = matching.connect(odd)
    assert conn is not None
    try:
        assert conn.execute("SELECT count(*) FROM lessons").fetchone() == (5,)
    finally:
        conn.close()
        assert stray.is_dir() or not stray.exists()  # nothing created beside it


def test_only_verified_lessons_are_candidates(team_repo: TeamRepo) -> None:
    conn = matching.connect(index_of(team_repo))
    assert conn is not None
    with conn:
        card = matching.for_card(conn, [], None, 10)
        assert [c.id for c in card] == [team_repo.migrate.id, team_repo.settings.id]
        assert all(c.reviewer == "alice" for c in card)
        for lesson in team_repo.unverified:
            hits = matching.for_files_or_error(conn, list(lesson.files), lesson.text, None, set(), limit=5)
            assert lesson.id not in {c.id for c in hits}


def test_shown_lessons_are_excluded(team_repo: TeamRepo) -> None:
    conn = matching.connect(index_of(team_repo))
    assert conn is not None
    with conn:
        files = ["src/app/settings.py"]
        assert [c.id for c in matching.for_files_or_error(conn, files, None, None, set())] == [team_repo.settings.id]
        assert matching.for_files_or_error(conn, files, None, None, {team_repo.settings.id}) == []


@pytest.mark.parametrize("text", ['"unbalanced', "NEAR(a b)", "a* OR -b", "col:value", "^start", "(", "AND",
                                  "Ä Ö ü 日本語 emoji 🎉", "", "x" * 10_000])
def test_fts_query_quotes_every_word(text: str) -> None:
    query = matching.fts_query(text)
    if query is not None:
        for part in query.split(" OR "):
            assert part.startswith('"') and part.endswith('"') and '"' not in part[1:-1]


@settings(max_examples=100)
@given(st.text(max_size=300))
def test_no_error_text_breaks_the_search(team_repo: TeamRepo, text: str) -> None:
    conn = matching.connect(index_of(team_repo))
    assert conn is not None
    try:
        matching.for_files_or_error(conn, [text[:40]], text, None, set(), limit=3)
    finally:
        conn.close()
