"""Citations and their outcomes: did the sessions that used a lesson go well?

A hook writes ``lesson.cited`` when an agent names a lesson it was shown. A day after that session ended, this
module decides the outcome from the local event log (its last test command passed; none of its commits was
reverted since) and writes one signed ``citation`` record, which feeds recall's outcome rate.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import defaultdict
from typing import Any, NamedTuple

from gitive.capture import events
from gitive.core.clock import now_ms
from gitive.core.home import gitive_home
from gitive.lessons import writing
from gitive.lessons.placement import place_like
from gitive.store import objects
from gitive.team.hive import Hive

SETTLE_MS = 24 * 3_600_000
TEST_COMMAND = re.compile(r"\b(pytest|py\.test|tox|nox|unittest|go test|cargo (nextest|test)|npm (run )?test|"
                          r"yarn test|pnpm test|jest|vitest|mocha|rspec|mvn (-\S+ )*test|gradle(w)? test|"
                          r"make (check|test)|ctest|phpunit|mix test|dotnet test)\b")
DONE_FILE = "citations-recorded.json"


class Outcome(NamedTuple):
    lesson: str
    session: str
    tests_passed: bool
    reverted: bool

    @property
    def success(self) -> bool:
        return self.tests_passed and not self.reverted


def _done() -> set[str]:
    try:
        return set(json.loads((gitive_home() / DONE_FILE).read_text()))
    except (OSError, ValueError):
        return set()


def _save_done(done: set[str]) -> None:
    path = gitive_home() / DONE_FILE
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(sorted(done)))
    tmp.replace(path)


def settled(repo: Any, now: int | None = None) -> list[Outcome]:
    """Citations whose session ended more than a day ago, with their outcome, not yet recorded."""
    now = now if now is not None else now_ms()
    done = _done()
    cited: set[tuple[str, str]] = set()
    last_event: dict[str, int] = defaultdict(int)
    last_test: dict[str, bool] = {}
    commits: dict[str, list[str]] = defaultdict(list)
    for event in events.read():
        session = (event.get("session") or {}).get("id")
        action = event.get("event", {}).get("action")
        if action == "vcs.commit":
            for linked in event.get("sessions") or []:
                revision = (event.get("vcs") or {}).get("revision")
                if revision:
                    commits[linked.get("id", "")].append(revision)
            continue
        if not session:
            continue
        last_event[session] = max(last_event[session], event.get("ts", 0))
        if action == "lesson.cited" and (event.get("lesson") or {}).get("id"):
            cited.add((session, event["lesson"]["id"]))
        command = event.get("command") or {}
        if TEST_COMMAND.search(command.get("command") or "") and command.get("exit_code") is not None:
            last_test[session] = command["exit_code"] == 0
    out = []
    for session, lesson in sorted(cited):
        if f"{session}\0{lesson}" in done or now - last_event[session] < SETTLE_MS:
            continue
        gone = objects.reverted(repo, commits.get(session, []), last_event[session])
        out.append(Outcome(lesson, session, last_test.get(session, False), gone))
    return out


def record(hive: Hive, conn: sqlite3.Connection, now: int | None = None) -> list[Outcome]:
    """Write a signed citation record for every settled citation of a lesson this index knows."""
    written, done = [], _done()
    for outcome in settled(hive.project, now):
        row = conn.execute("SELECT id, scope_kind, scope_value FROM lessons WHERE id = ?", (outcome.lesson,)).fetchone()
        if row is None:
            continue
        try:
            where = place_like(hive, conn, row[1], row[2], outcome.lesson)
        except Exception:  # a lesson of another project: it is recorded from a clone of that project
            continue
        writing.write(hive, conn, where,
                      {"type": "citation", "lesson": outcome.lesson, "session": outcome.session,
                       "success": outcome.success, "tests_passed": outcome.tests_passed, "reverted": outcome.reverted})
        done.add(f"{outcome.session}\0{outcome.lesson}")
        written.append(outcome)
    if written:
        _save_done(done)
    return written


def record_if_due(hive: Hive, every_ms: int = 3_600_000) -> list[Outcome]:
    """:func:`record`, at most once per ``every_ms`` (it reads the whole event log)."""
    from gitive.index.refresh import fresh_index

    if hive.removed:  # a removed machine writes no shared record; its sync must still work
        return []
    stamp = gitive_home() / "citations-checked"
    now = now_ms()
    try:
        if now - int(stamp.read_text()) < every_ms:
            return []
    except (OSError, ValueError):
        pass
    with fresh_index(hive) as (conn, _):
        written = record(hive, conn, now)
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.write_text(str(now))
    return written
