"""Outbound screening (anchor-spec E-7, E-8): a credential-file read and an egress in one session within 120 s.

Beacon's ``secret-read-then-egress`` correlation matches a credential-file read and a ``curl``, ``wget`` or
``nc`` command in either order within 120 seconds; gitive adds a team message (and a lesson proposal) as a
fourth kind of egress. The credential patterns are the presence filter's (:mod:`gitive.core.credentials`).

- **Read first, then send**: the send is checked before anything is written, so the message (or proposal) is
  held in this machine's ``outbox`` (``daemon.sqlite``, never shared) until its person releases it
  (``gitive release``, with the person gesture) or drops it (``gitive drop``).
- **Egress first, then read** (a message already sent, a ``curl`` already run): nothing can be taken back, so
  the match becomes a finding (:mod:`gitive.daemon.findings`) the anchor puts through its gate as a floor.

This is a speed bump for a session that was talked into leaking, not a wall: an agent with a shell can send
bytes anywhere without gitive. What it does guarantee is that gitive's own channels do not carry a secret a
session has just read without its person seeing the message first.
"""

from __future__ import annotations

import json
import re
import shlex
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

from gitive.capture import events
from gitive.core.clock import now_ms
from gitive.core.credentials import is_credential_path
from gitive.errors import GitiveError
from gitive.team.hive import Hive

WINDOW_MS = 120_000
RULE = "secret-read-then-egress"
EGRESS_COMMANDS = {"curl": "curl", "wget": "wget", "nc": "nc", "ncat": "nc", "netcat": "nc"}
SENT = "team.message.sent"
HELD = "team.message.held"
PROPOSED = "team.lesson.proposed"
_SHELL_SPLIT = re.compile(r"[;&|()`$<>\n]+")
_PATHLIKE = re.compile(r"[/.~]|^id_")


class Read(NamedTuple):
    """A credential-file read a session made: when, which file (kept on this machine), and its event id."""

    at: int
    path: str
    event: str


# --- what an event did --------------------------------------------------------------------------------------


def _words(command: str) -> list[str]:
    words: list[str] = []
    for part in _SHELL_SPLIT.split(command):
        try:
            words += shlex.split(part)
        except ValueError:  # an unbalanced quote: plain words are good enough to look for names
            words += part.split()
    return words


def credential_read(event: dict[str, Any]) -> str | None:
    """The credential file ``event`` read, or None: a tool that read or touched it, or a shell command
    naming it (``cat ~/.aws/credentials``). Only path-like words of a command count, so ``grep token``
    is no read."""
    for path in (event.get("file") or {}).get("paths") or []:
        if isinstance(path, str) and is_credential_path(path):
            return path
    command = (event.get("command") or {}).get("command")
    if isinstance(command, str) and command:
        for word in _words(command):
            if not word.startswith("-") and _PATHLIKE.search(word) and is_credential_path(word):
                return word
    return None


def egress_command(event: dict[str, Any]) -> str | None:
    """``curl``, ``wget`` or ``nc`` when ``event`` ran one of them (anywhere in a pipeline), else None."""
    command = (event.get("command") or {}).get("command")
    if not isinstance(command, str) or not command:
        return None
    for part in _SHELL_SPLIT.split(command):
        words = part.split()
        while words and ("=" in words[0] or words[0] in ("sudo", "env", "command", "exec", "nohup", "time")):
            words = words[1:]  # FOO=1 curl …, sudo curl …
        if words:
            name = words[0].rsplit("/", 1)[-1]
            if name in EGRESS_COMMANDS:
                return EGRESS_COMMANDS[name]
    return None


def _key(event: dict[str, Any]) -> tuple[str, str] | None:
    harness = (event.get("harness") or {}).get("name")
    session = (event.get("session") or {}).get("id")
    return (str(harness), str(session)) if harness and session else None


# --- which session sends -------------------------------------------------------------------------------------


def session_keys(db: sqlite3.Connection, name: str) -> list[tuple[str, str]]:
    """The harness sessions this machine names ``name`` (``(harness, session id)``, most recent first)."""
    rows = db.execute("SELECT harness, session_id FROM sessions WHERE name = ? ORDER BY last_seen DESC",
                      (name,)).fetchall()
    return [(str(h), str(s)) for h, s in rows]


def repo_session_keys(db: sqlite3.Connection, root: Path) -> list[tuple[str, str]]:
    """Every harness session this machine saw working in repository ``root``."""
    out = []
    for harness, session, repo in db.execute("SELECT harness, session_id, repo FROM sessions WHERE repo IS NOT "
                                             "NULL ORDER BY last_seen DESC").fetchall():
        if Path(repo).resolve() == root:
            out.append((str(harness), str(session)))
    return out


def last_read(keys: Iterable[tuple[str, str]], now: int | None = None) -> Read | None:
    """The latest credential-file read by any of ``keys`` in the last 120 s, or None."""
    now = now if now is not None else now_ms()
    wanted = set(keys)
    if not wanted:
        return None
    found: Read | None = None
    for event in events.read(since_ms=now - WINDOW_MS):
        if _key(event) not in wanted or event["ts"] > now:
            continue
        path = credential_read(event)
        if path is not None and (found is None or event["ts"] >= found.at):
            found = Read(event["ts"], path, str(event["event"].get("id", "")))
    return found


def reason(read: Read, now: int, what: str = "message") -> str:
    """Why a send is held, in one line for ``gitive held`` (the file's name, never its contents)."""
    ago = max(0, (now - read.at) // 1000)
    return (f"outbound screening ({RULE}): this session read the credential file {read.path[-80:]} {ago} s "
            f"before this {what}")


# --- the outbox: what waits for its person -------------------------------------------------------------------

SCHEMA = """
CREATE TABLE IF NOT EXISTS outbox(id TEXT PRIMARY KEY, kind TEXT NOT NULL, sender TEXT NOT NULL,
    to_addr TEXT NOT NULL, body TEXT NOT NULL, payload TEXT NOT NULL, session_key TEXT, reason TEXT NOT NULL,
    held_at INTEGER NOT NULL, state TEXT NOT NULL, decided_at INTEGER);
"""


def ensure(db: sqlite3.Connection) -> None:
    db.executescript(SCHEMA)


def hold(db: sqlite3.Connection, *, ident: str, kind: str, sender: str, to: str, body: str,
         payload: dict[str, Any], keys: list[tuple[str, str]], why: str, now: int) -> None:
    """Keep a send for its person and record the hold as an event of the sending session."""
    ensure(db)
    key = f"{keys[0][0]}:{keys[0][1]}" if keys else None
    db.execute("INSERT INTO outbox (id, kind, sender, to_addr, body, payload, session_key, reason, held_at, state) "
               "VALUES (?,?,?,?,?,?,?,?,?, 'held')",
               (ident, kind, sender, to, body, json.dumps(payload, sort_keys=True), key, why, now))
    record(HELD, keys, ident, to, kind=kind, ts=now)


def held(db: sqlite3.Connection) -> list[dict[str, Any]]:
    """Sends held by outbound screening, oldest first, in the shape of ``gitive held``'s rows."""
    ensure(db)
    rows = db.execute("SELECT id, kind, sender, to_addr, body, reason, held_at FROM outbox WHERE state = 'held' "
                      "ORDER BY held_at, id").fetchall()
    return [{"id": r[0], "direction": "outbound", "kind": r[1], "from": r[2], "to_session": r[3], "body": r[4],
             "reason": r[5], "received_at": r[6]} for r in rows]


def pending(db: sqlite3.Connection, ident: str) -> dict[str, Any]:
    """Held send ``ident`` as it was kept.

    Raises:
        GitiveError: no send with that id is held.
    """
    ensure(db)
    row = db.execute("SELECT kind, sender, to_addr, body, payload, session_key FROM outbox WHERE id = ? AND "
                     "state = 'held'", (ident,)).fetchone()
    if row is None:
        raise GitiveError(f"no held message {ident[:80]!r}; `gitive held` lists them")
    return {"id": ident, "kind": row[0], "sender": row[1], "to": row[2], "body": row[3],
            "payload": json.loads(row[4]), "session_key": row[5]}


def decide(db: sqlite3.Connection, ident: str, state: str) -> bool:
    """Mark held send ``ident`` ``released`` or ``dropped``; a dropped one keeps neither body nor payload.
    False when it was no longer held (decided by another process meanwhile)."""
    ensure(db)
    keep = state == "released"
    return bool(db.execute("UPDATE outbox SET state = ?, decided_at = ?, body = CASE WHEN ? THEN body ELSE '' END, "
                           "payload = CASE WHEN ? THEN payload ELSE '{}' END WHERE id = ? AND state = 'held'",
                           (state, now_ms(), keep, keep, ident)).rowcount)


def record(action: str, keys: list[tuple[str, str]], ident: str, to: str, *, kind: str = "message",
           ts: int | None = None, **extra: Any) -> None:
    """The event a send (or hold) is in the sending session's log (E-7): ids and address, no body."""
    harness, session = keys[0] if keys else (None, None)
    events.append(events.make(action, harness=harness, session=session, ts=ts,
                              message={"id": ident, "to": to[:200], "kind": kind, **extra}))


# --- lesson proposals -----------------------------------------------------------------------------------------


def screen_proposal(hive: Hive, session: str | None, asked: dict[str, Any]) -> None:
    """Hold a lesson proposal (``asked``: the arguments of :func:`gitive.lessons.propose.propose`) made within
    120 s of a credential-file read by ``session`` (``person/name``), or by any session of this repository on
    this machine when none is named.

    Raises:
        GitiveError: it was held; nothing was written.
    """
    from gitive.daemon import db as daemon_db
    from gitive.daemon.ulid import new_ulid

    root = Path(hive.project.workdir or hive.project.path).resolve()
    with daemon_db.connect() as db:
        keys = session_keys(db, session.split("/", 1)[-1]) if session else repo_session_keys(db, root)
        now = now_ms()
        found = last_read(keys, now)
        if found is None:
            return
        ident, why = new_ulid(), reason(found, now, "lesson proposal")
        hold(db, ident=ident, kind="lesson", sender=session or f"sessions of {root.name}", to="lesson proposal",
             body=str(asked.get("text", "")), payload={"repo": str(root), "asked": asked}, keys=keys, why=why,
             now=now)
    raise GitiveError(f"HELD, not proposed: {why}. Nothing was written; your user decides (`gitive held`, then "
                      f"`gitive release {ident}` or `gitive drop {ident}`). Do not propose it again.")


def propose_held(payload: dict[str, Any]) -> str:
    """Propose a lesson that was held, now that its person released it (every write-time rule still applies);
    say what was done.

    Raises:
        GitiveError: the repository is gone, or a write-time rule refuses the proposal (it stays held).
    """
    from gitive.index.refresh import fresh_index
    from gitive.lessons.propose import propose
    from gitive.team.hive import open_hive

    hive = open_hive(payload["repo"])
    with fresh_index(hive) as (conn, _):
        done = propose(hive, conn, **payload["asked"])
    return f"proposed lesson {done.id[:12]} (it waits for a review)"
