"""Advisory file claims: a session says "I am changing these files for the next N minutes".

A claim is a hint for teammates, never a lock: nothing refuses an edit. It lives in this machine's
``daemon.sqlite`` and is published with the session in presence (metadata only: repository-relative paths,
an expiry, a short note), so ``gitive who`` shows it and overlap notices tell a session that edits a file
someone else claimed. Claims end when they expire, when the session ends, or when released (0 minutes).
"""

from __future__ import annotations

import sqlite3
from pathlib import PurePosixPath
from typing import Any

from gitive.core.clock import now_ms
from gitive.core.credentials import is_credential_path
from gitive.errors import GitiveError, quoted

DEFAULT_MINUTES = 30
MAX_MINUTES = 8 * 60
MAX_PATHS = 32
MAX_NOTE = 200
MAX_PATH = 1_024  # characters of one claimed path (the MCP tool's schema says the same)
MAX_SESSION = 200  # characters of a session's address


def clean_path(path: str, root: str | None) -> str:
    """A repository-relative POSIX path, as the hooks record files.

    Raises:
        GitiveError: an empty path, or one outside the repository.
    """
    if len(path) > MAX_PATH:
        raise GitiveError(f"a claimed path is at most {MAX_PATH:,} characters, not {quoted(path)}")
    text = path.strip().replace("\\", "/")
    if root and text.startswith(root.rstrip("/") + "/"):
        text = text[len(root.rstrip("/")) + 1:]
    rel = PurePosixPath(text)
    if not text or rel.is_absolute() or ".." in rel.parts:
        raise GitiveError(f"claim files by their path in the repository (e.g. src/app.py), not {quoted(path)}")
    return str(rel)


def claim(db: sqlite3.Connection, session: str, paths: list[str], minutes: int, note: str | None = None,
          now: int | None = None) -> list[dict[str, Any]]:
    """Claim ``paths`` for ``session`` for ``minutes`` (0 releases them); return what the session holds now.

    Raises:
        GitiveError: no paths, too many, or minutes out of range.
    """
    now = now if now is not None else now_ms()
    if not paths:
        raise GitiveError("say which files to claim (paths in the repository)")
    if len(session) > MAX_SESSION:
        raise GitiveError(f"a session's address is at most {MAX_SESSION} characters, not {quoted(session)}")
    if len(paths) > MAX_PATHS:
        raise GitiveError(f"at most {MAX_PATHS} files in one claim; claim the few you are changing now")
    if not 0 <= minutes <= MAX_MINUTES:
        raise GitiveError(f"a claim lasts 1 to {MAX_MINUTES} minutes (0 releases it)")
    clean = [clean_path(p, None) for p in paths]
    chosen = [p for p in dict.fromkeys(clean) if not is_credential_path(p)]  # never published: see presence
    if minutes == 0:
        db.executemany("DELETE FROM claims WHERE session = ? AND path = ?", [(session, p) for p in chosen])
    else:
        until = now + minutes * 60_000
        db.executemany("INSERT INTO claims VALUES (?, ?, ?, ?) ON CONFLICT(session, path) DO UPDATE SET "
                       "until = excluded.until, note = excluded.note",
                       [(session, p, until, (note or "")[:MAX_NOTE] or None) for p in chosen])
    return held(db, session, now)


def held(db: sqlite3.Connection, session: str, now: int | None = None) -> list[dict[str, Any]]:
    """The unexpired claims of ``session``, oldest path first; expired ones are dropped."""
    now = now if now is not None else now_ms()
    db.execute("DELETE FROM claims WHERE until <= ?", (now,))
    rows = db.execute("SELECT path, until, note FROM claims WHERE session = ? ORDER BY path", (session,)).fetchall()
    return [{"path": p, "until": until, **({"note": note} if note else {})} for p, until, note in rows]


def release_ended(db: sqlite3.Connection, live_sessions: set[str]) -> None:
    """Drop the claims of sessions that are no longer live (ended, or gone quiet)."""
    for (session,) in db.execute("SELECT DISTINCT session FROM claims").fetchall():
        if session not in live_sessions:
            db.execute("DELETE FROM claims WHERE session = ?", (session,))


def active(row: dict[str, Any], now: int) -> list[dict[str, Any]]:
    """The claims a directory row (a session of this machine or a peer's) publishes that have not expired."""
    out = []
    for c in row.get("claims") or []:
        if isinstance(c, dict) and isinstance(c.get("path"), str) and isinstance(c.get("until"), int) \
                and c["until"] > now:
            out.append(c)
    return out


def conflicts(directory: list[dict[str, Any]], paths: list[str], address: str, project: str | None,
              now: int | None = None) -> list[dict[str, Any]]:
    """Other live sessions' claims on ``paths`` in the same project: ``{path, by, until, note}``."""
    now = now if now is not None else now_ms()
    wanted = set(paths)
    found = []
    for row in directory:
        if row.get("address") == address or not row.get("live") or row.get("project") != project:
            continue
        for c in active(row, now):
            if c["path"] in wanted:
                found.append({"path": c["path"], "by": row["address"], "until": c["until"],
                              **({"note": c["note"]} if c.get("note") else {})})
    return found
