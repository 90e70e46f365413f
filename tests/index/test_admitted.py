"""admitted.where: the shortcut only over the view definition it was written for, else the view's own check."""

from __future__ import annotations

from pathlib import Path

from gitive.index import admitted, db


def test_where_falls_back_to_the_views_own_check_when_the_view_changed(tmp_path: Path) -> None:
    with db.connect(tmp_path / "index.sqlite") as conn:
        assert admitted.view_digest(conn) == admitted.KNOWN_VIEW
        assert admitted.where(conn, "x") == "1"  # an empty index: every (no) author is a clean member
        conn.execute("DROP VIEW admitted_entries")
        conn.execute("CREATE VIEW admitted_entries AS SELECT author, log, seq FROM entries")  # a later rule
        assert admitted.view_digest(conn) != admitted.KNOWN_VIEW
        assert admitted.where(conn, "x") == admitted.exact("x")
        assert admitted.where(conn, "x", few=True) == admitted.exact("x")
        assert "x.author" in admitted.exact("x") and not admitted.wholesale(conn)
