"""Sessions read back from the local event log (this test's ``GITIVE_HOME``), paths relative to the repo."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gitive.capture import events
from gitive.mcp import sessions

NOW = 1_800_000_000_000


def _event(action: str, session: str, at: int, *, cwd: Path | None = None, paths: list[str] | None = None,
           harness: str = "claude", **fields: Any) -> None:
    extra = {"file": {"paths": paths}} if paths else {}
    events.append(events.make(action, harness=harness, session=session, cwd=str(cwd) if cwd else None, ts=at,
                              **extra, **fields))


def test_summarize_turns_paths_relative_and_drops_outside_ones(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _event("tool.completed", "s1", NOW, cwd=root, paths=[str(root / "src/a.py"), "src/b.py", "/etc/passwd"])
    _event("tool.completed", "s1", NOW + 1, cwd=root / "src", paths=["a.py"])
    [seen] = sessions.summarize(root, NOW - 1)
    assert (seen.session, seen.harness, seen.in_repo, seen.ended) == ("s1", "claude", True, False)
    assert seen.files == {"src/a.py": 2, "src/b.py": 1}
    assert (seen.first_ms, seen.last_ms) == (NOW, NOW + 1)


def test_summarize_orders_by_last_seen_and_marks_ended_and_other_repos(tmp_path: Path) -> None:
    root, other = tmp_path / "repo", tmp_path / "other"
    _event("session.start", "old", NOW, cwd=root)
    _event("session.end", "old", NOW + 5, cwd=root)
    _event("tool.completed", "elsewhere", NOW + 10, cwd=other, paths=[str(other / "x.py")], harness="codex")
    found = sessions.summarize(root, NOW - 1)
    assert [s.session for s in found] == ["elsewhere", "old"]
    assert (found[0].in_repo, found[0].files, found[0].harness) == (False, {}, "codex")
    assert (found[1].in_repo, found[1].ended) == (True, True)


def test_summarize_skips_events_before_since_and_without_a_session(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    _event("tool.completed", "early", NOW - 10_000, cwd=root, paths=["a.py"])
    events.append(events.make("tool.completed", ts=NOW, file={"paths": [str(root / "a.py")]}))
    assert sessions.summarize(root, NOW - 1) == []


def test_summarize_with_no_event_log_is_empty(tmp_path: Path) -> None:
    assert sessions.summarize(tmp_path, 0) == []


def test_relative_handles_absolute_relative_and_outside_paths(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    assert sessions.relative(str(root / "a" / ".." / "b.py"), None, root) == "b.py"
    assert sessions.relative("./src/c.py", None, root) == "src/c.py"
    assert sessions.relative("c.py", str(root / "src"), root) == "src/c.py"
    assert sessions.relative("../x.py", str(root), root) is None
    assert sessions.relative("/elsewhere/x.py", None, root) is None


def test_touching_matches_files_and_directories(tmp_path: Path) -> None:
    seen = sessions.Seen("s", "claude", 0, 0, files={"src/auth/session.py": 3, "src/authz.py": 1, "README": 1})
    assert sessions.touching([seen], ["src/auth"]) == [(seen, {"src/auth/session.py": 3})]
    assert sessions.touching([seen], ["README", "nothing.py"]) == [(seen, {"README": 1})]
    assert sessions.touching([seen], ["src/auth/other.py"]) == []
