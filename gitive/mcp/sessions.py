"""Agent sessions on this machine, as the local event log saw them: harness, when, and which files.

The event log (``gitive.capture.events``) is this machine's own: its sessions are this machine's person's.
Paths in events are what the harness reported, absolute or relative to the session's working directory; they
are turned into paths relative to the repository root, and paths outside it are left out.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

ENDED = ("session.end", "session.ended", "session.stop")


@dataclass
class Seen:
    session: str
    harness: str | None
    first_ms: int
    last_ms: int
    cwd: str | None = None
    ended: bool = False
    in_repo: bool = False
    files: dict[str, int] = field(default_factory=dict)  # repository-relative path -> events touching it


def _paths(event: dict[str, Any]) -> list[str]:
    found = event.get("file") or {}
    if not isinstance(found, dict):
        return []
    paths = found.get("paths") or ([found["path"]] if found.get("path") else [])
    return [p for p in paths if isinstance(p, str) and p] if isinstance(paths, list) else []


def relative(path: str, cwd: str | None, root: Path) -> str | None:
    """``path`` relative to ``root`` (POSIX spelling), or None when it lies outside the repository."""
    candidate = Path(path)
    if not candidate.is_absolute():
        if not cwd:
            return str(PurePosixPath(path.replace("\\", "/"))).removeprefix("./")
        candidate = Path(cwd) / candidate
    try:
        return Path(_normal(candidate)).relative_to(root).as_posix()
    except ValueError:
        return None


def _normal(path: Path) -> str:
    return os.path.normpath(str(path))


def _inside(cwd: str | None, root: Path) -> bool:
    if not cwd:
        return False
    try:
        Path(_normal(Path(cwd))).relative_to(root)
    except ValueError:
        return False
    return True


def summarize(root: Path, since_ms: int) -> list[Seen]:
    """Every session with events since ``since_ms``, most recently seen first."""
    from gitive.capture import events

    root = Path(_normal(root.resolve()))
    seen: dict[str, Seen] = {}
    for event in events.read(since_ms=since_ms):
        session = event.get("session") or {}
        sid = session.get("id") if isinstance(session, dict) else None
        if not isinstance(sid, str) or not sid:
            continue
        at = event.get("ts") if isinstance(event.get("ts"), int) else since_ms
        cwd = session.get("working_directory")
        item = seen.get(sid)
        if item is None:
            found = event.get("harness")
            harness = found.get("name") if isinstance(found, dict) else None
            item = seen[sid] = Seen(sid, harness, at, at)
        item.last_ms = max(item.last_ms, at)
        if isinstance(cwd, str) and cwd:
            item.cwd = cwd
            item.in_repo = item.in_repo or _inside(cwd, root)
        if (event.get("event") or {}).get("action") in ENDED:
            item.ended = True
        for path in _paths(event):
            rel = relative(path, item.cwd, root)
            if rel is not None:
                item.files[rel] = item.files.get(rel, 0) + 1
                item.in_repo = True
    return sorted(seen.values(), key=lambda s: (-s.last_ms, s.session))


def touching(sessions: list[Seen], files: list[str]) -> list[tuple[Seen, dict[str, int]]]:
    """The sessions that touched any of ``files`` (or a file below one of them), with those files' counts."""
    out = []
    for item in sessions:
        hits = {path: n for path, n in item.files.items()
                if any(path == f or path.startswith(f.rstrip("/") + "/") for f in files)}
        if hits:
            out.append((item, hits))
    return out
