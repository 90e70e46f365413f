"""Items the anchor's gate delivered to this machine's person, shown through this machine only.

The anchor never reaches a person directly: its ledger says "deliver item X to bob" and bob's own daemon,
reading the replicated ledger after a sync, shows it three ways (docs/gate.md):

- *session*: a ``<team-notice from="anchor">`` line at the next turn of each of the person's live sessions
  here, telling the agent what to tell its user;
- *desktop*: an OS notification (``notify-send``, or ``osascript`` on macOS) when present, at most one a
  minute (items arriving within the minute are counted into the next);
- *inbox*: ``gitive inbox`` lists it.

A floor, an alarm and a digest note are shown at once. An ``attention`` item waits for the next breakpoint of
this machine's sessions (a commit, a test run finished, a session idle 60 s; none live: at once), at most the
bounded deferral the ledger gives. Breakpoints come from the same local event log presence is made of, so
they are as fresh as they can be. Only entries signed by an anchor count; the same item delivered by two
anchors is shown once. Decisions in shadow (other than floors) are not shown: ``gitive digest`` lists them.
"""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
import subprocess
import sys
from typing import Any

from gitive.capture import events, framing
from gitive.core.clock import now_ms

SCHEMA = """
CREATE TABLE IF NOT EXISTS anchor_items(item TEXT PRIMARY KEY, team TEXT NOT NULL, person TEXT NOT NULL, branch TEXT NOT NULL,
    anchor TEXT NOT NULL, decided_at INTEGER NOT NULL, received INTEGER NOT NULL, show_by INTEGER NOT NULL,
    title TEXT NOT NULL, kind TEXT NOT NULL, rule TEXT NOT NULL, channel TEXT NOT NULL, state TEXT NOT NULL,
    shown_at INTEGER, sessions TEXT, desktop INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS anchor_items_state ON anchor_items(state);
CREATE TABLE IF NOT EXISTS item_marks(item TEXT PRIMARY KEY, wanted INTEGER NOT NULL, at INTEGER NOT NULL);
"""
IDLE_BREAK_MS = 60_000
DESKTOP_EVERY_MS = 60_000
_TESTS = re.compile(r"(^|[\s;&|(/])(pytest|py\.test|tox|nox|unittest|go test|cargo test|cargo nextest|npm (run )?"
                    r"test|yarn test|pnpm test|jest|vitest|mocha|rspec|phpunit|ctest|mvn test|gradle test|"
                    r"make (test|check)|bundle exec rake)\b")


def ensure(db: sqlite3.Connection) -> None:
    db.executescript(SCHEMA)


def take(index: sqlite3.Connection, db: sqlite3.Connection, team: str, person: str, now: int | None = None) -> int:
    """Record the deliveries to ``person`` the ledger holds that this machine has not seen; how many were new."""
    from gitive.index import ledger as ledger_reads

    ensure(db)
    now = now if now is not None else now_ms()
    key = f"anchor-items-at:{team}"
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    cursor = int(row[0]) if row else 0
    found = [d for d in ledger_reads.decisions(index, person=person, since=max(0, cursor - 86_400_000))
             if d["branch"] == "floor" or (d["branch"] in ("alarm", "attention", "note") and not d["shadow"])]
    records = ledger_reads.item_records(index, [d["item"] for d in found])
    added = 0
    for d in sorted(found, key=lambda d: (d["at"], d["anchor"], d["seq"])):
        record = records.get(d["item"]) or {}
        wait = max(0, int(d.get("until") or d["at"]) - d["at"]) if d["branch"] == "attention" else 0
        cur = db.execute("INSERT OR IGNORE INTO anchor_items VALUES (?,?,?,?,?,?,?,?,?,?,?,?, 'waiting', NULL, NULL, 0)",
                         (d["item"], team, person, d["branch"], d["anchor"], d["at"], now, now + wait,
                          _title(record),
                          str(record.get("kind") or "item"), d["rule"], json.dumps(d.get("channel") or ["inbox"])))
        added += cur.rowcount
        cursor = max(cursor, d["at"])
    db.execute("INSERT INTO meta VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
               (key, str(cursor)))
    return added


def at_breakpoint(sessions: list[dict[str, Any]], since: int, now: int) -> str | None:
    """Why this machine's person is at a breakpoint now (after ``since``), or None when they are not.

    A false breakpoint costs more than a missed one, so only clear signals count: a commit, a test run that
    finished, a session idle for a minute, or no live session at all.
    """
    if not sessions:
        return "no live session"
    for s in sessions:
        if s.get("turn") == "idle" and now - int(s.get("last_seen") or now) >= IDLE_BREAK_MS:
            return f"session {s['name']} idle a minute"
    for e in events.read(since_ms=since, actions=("vcs.commit", "tool.completed")):
        if e["event"]["action"] == "vcs.commit":
            return "a commit"
        command = str((e.get("command") or {}).get("command") or "")
        if command and _TESTS.search(command):
            return "a test run finished"
    return None


def notice(item: str, kind: str, title: str) -> str:
    """The framed line a session sees: data for the agent, telling it what to tell its user."""
    return (f"<team-notice from=\"anchor\" item=\"{framing.escape_attr(item[:12])}\" "
            f"kind=\"{framing.escape_attr(kind)}\">\n"
            f"The team's anchor has something for your user; tell them: {framing.defang(title)}\n"
            f"(They can ask why with `gitive why {item[:12]}`; `gitive inbox` lists every item.)\n"
            "</team-notice>")


def show_due(db: sqlite3.Connection, team: str, sessions: list[dict[str, Any]], now: int | None = None
             ) -> list[str]:
    """Show what is due for ``team`` (``sessions``: this machine's live sessions in it): every waiting floor,
    alarm and note, and attention items at a breakpoint or at their deferral's end. Returns the items shown."""
    ensure(db)
    now = now if now is not None else now_ms()
    waiting = db.execute("SELECT item, branch, received, show_by, title, kind, channel FROM anchor_items WHERE "
                         "state = 'waiting' AND team = ? ORDER BY decided_at, item", (team,)).fetchall()
    shown = []
    reason_cache: dict[int, str | None] = {}
    for item, branch, received, show_by, title, kind, channel in waiting:
        if branch == "attention" and now < show_by:
            if received not in reason_cache:
                reason_cache[received] = at_breakpoint(sessions, received, now)
            if reason_cache[received] is None:
                continue
        names = [s["name"] for s in sessions] if "session" in json.loads(channel) else []
        for name in names:
            db.execute("INSERT OR IGNORE INTO notices VALUES (?,?,?,?, 'queued', NULL)",
                       (f"anchor:{item}:{name}", name, notice(item, kind, title), now))
        db.execute("UPDATE anchor_items SET state = 'shown', shown_at = ?, sessions = ?, desktop = ? WHERE item = ?",
                   (now, json.dumps(names), int("desktop" in json.loads(channel)), item))
        shown.append(item)
    desktop(db, now)
    return shown


def desktop(db: sqlite3.Connection, now: int) -> bool:
    """One OS notification for the items shown since the last one, at most one a minute; true if one went."""
    pending = db.execute("SELECT item, title FROM anchor_items WHERE desktop = 1 ORDER BY shown_at").fetchall()
    if not pending:
        return False
    row = db.execute("SELECT value FROM meta WHERE key = 'desktop-at'").fetchone()
    if row and now - int(row[0]) < DESKTOP_EVERY_MS:
        return False
    title = "gitive: the anchor has " + (f"{len(pending)} items for you" if len(pending) > 1 else "an item for you")
    body = pending[-1][1][:200]
    if _notify(title, body):
        db.execute("INSERT INTO meta VALUES ('desktop-at', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                   (str(now),))
    db.execute("UPDATE anchor_items SET desktop = 2 WHERE desktop = 1")  # 2: notified (or no notifier here)
    return True


def _notify(title: str, body: str) -> bool:
    """``notify-send`` (Linux, BSD) or ``osascript`` (macOS) when present; false when neither is."""
    if shutil.which("notify-send"):
        cmd = ["notify-send", "--app-name=gitive", title, body]
    elif sys.platform == "darwin" and shutil.which("osascript"):
        quoted = [json.dumps(t) for t in (body, title)]  # AppleScript string literals use the same escapes
        cmd = ["osascript", "-e", f"display notification {quoted[0]} with title {quoted[1]}"]
    else:
        return False
    try:
        subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, timeout=5, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return True


def items(db: sqlite3.Connection, limit: int = 100) -> list[dict[str, Any]]:
    """What the anchor delivered to this machine's person, newest first (``gitive inbox``)."""
    ensure(db)
    keys = ("item", "branch", "anchor", "decided_at", "title", "kind", "rule", "state", "shown_at", "sessions")
    rows = db.execute(f"SELECT {', '.join(keys)} FROM anchor_items ORDER BY decided_at DESC LIMIT ?", (limit,))
    out = []
    for row in rows:
        found = dict(zip(keys, row, strict=True))
        found["sessions"] = json.loads(found["sessions"] or "[]")
        out.append(found)
    return out


def mark(db: sqlite3.Connection, item: str, wanted: bool, at: int) -> None:
    ensure(db)
    db.execute("INSERT INTO item_marks VALUES (?,?,?) ON CONFLICT(item) DO UPDATE SET wanted = excluded.wanted, "
               "at = excluded.at", (item, int(wanted), at))


def marks(db: sqlite3.Connection) -> dict[str, bool]:
    ensure(db)
    return {item: bool(w) for item, w in db.execute("SELECT item, wanted FROM item_marks")}


def _title(record: dict[str, Any]) -> str:
    from gitive.index import ledger as ledger_reads

    title, why = ledger_reads.title_or_why(record)
    return title if title is not None else f"an item from the anchor ({why})"
