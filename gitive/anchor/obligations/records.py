"""Writing obligations and their state changes, and reading them back with a three-valued evaluation.

:func:`record` is the one way anything creates an obligation: ``gitive owe`` (a person), the MCP ``owe`` tool (an
agent, for its own person), and the quiet pass proposing a promise once its owner accepts it. Every rule is
checked before anything is written; a refused obligation writes nothing.

Evaluation is the anchor's job, and what a machine can say about it is three-valued: *satisfied* (an anchor
fired it), *unsatisfied* (waiting), or *unverifiable*, always with the reason (the condition names events an
anchor cannot see, no anchor is in the team, the anchor reported an evaluation error). Unverifiable is never
shown as "nothing owed".
"""

from __future__ import annotations

import difflib
import re
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from gitive.anchor.obligations import conditions
from gitive.anchor.obligations.decisions import Unlock, needs_gesture, person_decision
from gitive.anchor.obligations.vocabulary import LOCAL, WATCHER, load
from gitive.core.clock import now_ms
from gitive.core.ids import is_name
from gitive.core.records import TEAM_SCOPE
from gitive.errors import GitiveError, InvalidRecord
from gitive.index import obligations as table
from gitive.store import logs
from gitive.team.hive import Hive

DAY_MS = 86_400_000
DEFAULT_EXPIRES_MS = table.DEFAULT_EXPIRY_MS
MAX_EXPIRES_MS = table.MAX_EXPIRY_MS
MAX_FILES = 32
ANCHOR_PERSON = "anchor"
_CODE_EXT = ("py|md|rs|go|js|ts|tsx|jsx|java|kt|rb|c|h|cc|cpp|hpp|cs|json|yaml|yml|toml|sql|sh|txt|cfg|ini|"
             "html|css|proto|lock|xml|gradle|swift|php|scala|ex|exs|tf")
_DURATION = re.compile(r"^(\d+)\s*([mhdw])$")
_UNITS = {"m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 7 * 86_400_000}
_PATHLIKE = re.compile(rf"(?<![\w/.-])((?:[\w.-]+/)+[\w.-]+|[\w-]+\.(?:{_CODE_EXT}))(?![\w/-])")


def parse_duration(text: str, what: str = "duration") -> int:
    """``14d``, ``36h``, ``2w``, ``90m`` in milliseconds.

    Raises:
        InvalidRecord: not such a duration.
    """
    found = _DURATION.match(str(text).strip().lower())
    if not found or int(found.group(1)) == 0:
        raise InvalidRecord(f"{what} {text!r} is not a duration: use e.g. 14d, 36h, 2w")
    return int(found.group(1)) * _UNITS[found.group(2)]


def parse_deadline(text: str) -> int:
    """``2026-12-20`` (the end of that day, UTC) or an ISO time (``2026-12-20T17:00:00+01:00``) in ms.

    Raises:
        InvalidRecord: neither.
    """
    from datetime import UTC, datetime

    value = str(text).strip()
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
            start = datetime.fromisoformat(value).replace(tzinfo=UTC)
            return int(start.timestamp() * 1000) + DAY_MS - 1
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidRecord(f"deadline {text!r} is not a date: use 2026-12-20 or 2026-12-20T17:00Z") from None
    return int((when if when.tzinfo else when.replace(tzinfo=UTC)).timestamp() * 1000)


@dataclass
class Draft:
    """What a new obligation says, before it is checked and signed."""

    owner: str
    condition: str
    action: str
    to: str | None = None
    deadline: int | None = None  # ms since the epoch
    expires_in_ms: int = DEFAULT_EXPIRES_MS
    files: list[str] = field(default_factory=list)
    source: dict[str, Any] = field(default_factory=lambda: {"kind": "cli"})


def _member(conn: sqlite3.Connection, machine: str) -> tuple[str, str]:
    row = conn.execute("SELECT person, role, active FROM members WHERE machine = ?", (machine,)).fetchone()
    if not row or not row[2]:
        raise GitiveError("this machine is not an active member of the team; ask a member for an invite")
    return row[0], row[1]


def _persons(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT DISTINCT person FROM members WHERE active = 1 AND role != 'anchor'")}


def _check_to(conn: sqlite3.Connection, to: str | None) -> None:
    if to is None:
        return
    person, _, session = to.partition("/")
    if not is_name(person) or (session and not is_name(session)):
        raise InvalidRecord(f"`to` {to!r} is not a person or a session address (person/session-name)")
    if person not in _persons(conn):
        raise InvalidRecord(f"`to` names {person!r}, who is not an active person of the team; see `gitive team`")


def files_in(text: str) -> list[str]:
    """Repository paths a text mentions (``src/auth.py``, ``docs/x.md``): what "touches these files" uses."""
    return list(dict.fromkeys(m.group(1).strip("./") for m in _PATHLIKE.finditer(text)))[:MAX_FILES]


def _clean_files(files: list[str]) -> list[str]:
    out = []
    for f in files:
        path = str(f).replace("\\", "/").strip().removeprefix("./")
        if not path or path.startswith("/") or ".." in path.split("/") or len(path) > 300:
            raise InvalidRecord(f"file {f!r} is not a path inside the repository")
        out.append(path)
    return list(dict.fromkeys(out))[:MAX_FILES]


def check(conn: sqlite3.Connection, me_person: str, draft: Draft, actor: str, now: int) -> dict[str, Any]:
    """Every write-time rule; the record to sign (without its id).

    Raises:
        InvalidRecord: the first rule it breaks, with what to change.
    """
    action = " ".join(draft.action.split())
    if not action:
        raise InvalidRecord("the action is empty: say what is owed, e.g. --do 'remove the grace period'")
    if len(action) > table.MAX_ACTION:
        raise InvalidRecord(f"the action is {len(action)} characters, over the {table.MAX_ACTION} limit")
    _can_fire(conditions.analyse(draft.condition))
    if draft.owner == ANCHOR_PERSON or draft.owner not in _persons(conn):
        raise InvalidRecord(f"owner {draft.owner!r} is not an active person of the team; see `gitive team`")
    if actor == "agent" and draft.owner != me_person:
        raise InvalidRecord(f"an agent records only its own person's obligations ({me_person}), not {draft.owner}'s")
    _check_to(conn, draft.to)
    if not 0 < draft.expires_in_ms <= MAX_EXPIRES_MS:
        raise InvalidRecord("an obligation expires after at most 90 days (renew it to keep it longer)")
    expires = now + draft.expires_in_ms
    if draft.deadline is not None:
        if draft.deadline <= now:
            raise InvalidRecord("the deadline is already past; give a later one")
        if draft.deadline > expires:
            raise InvalidRecord("the deadline falls after the obligation expires; pass a longer --expires")
    files = _clean_files(draft.files) or files_in(action)
    record: dict[str, Any] = {"type": "obligation", "owner": draft.owner, "condition": draft.condition,
                              "action": action, "expires": expires, "created": now, "source": draft.source,
                              "vocabulary": load().version, "actor": actor}
    for key, value in (("to", draft.to), ("deadline", draft.deadline), ("files", files or None)):
        if value is not None:
            record[key] = value
    return record


def record(hive: Hive, conn: sqlite3.Connection, draft: Draft, *, actor: str, project: str | None = None,
           now: int | None = None, unlock: Unlock | None = None) -> dict[str, Any]:
    """Check and sign a new obligation in this machine's ``team`` log; return the record written.

    ``actor`` is ``"person"`` for a person at a terminal, ``"agent"`` otherwise. An obligation a person records
    for someone else carries their gesture: ``unlock`` is asked for the person key then.

    Raises:
        InvalidRecord: a write-time rule refused it; nothing was written.
        GitiveError: this machine is not an active member, or is the team's anchor.
    """
    now = now if now is not None else now_ms()
    me_person, role = _member(conn, hive.me)
    if role == "anchor":
        raise GitiveError("the anchor records no obligations: it evaluates them")
    body = check(conn, me_person, draft, actor, now)
    if project:
        body["project"] = project
    body["id"] = table.obligation_id(hive.me, body)
    if needs_gesture(actor, me_person, draft.owner):
        body = person_decision(hive, conn, body, unlock)
    logs.append(hive.store, hive.key, hive.team_id, "team", TEAM_SCOPE, body, at=now)
    table.refresh(conn)
    return body


def resolve(conn: sqlite3.Connection, prefix: str) -> dict[str, Any]:
    """The obligation whose id starts with ``prefix`` (at least 6 characters).

    Raises:
        GitiveError: none, or several, match.
    """
    text = prefix.strip().lower()
    if len(text) < 6 or not re.fullmatch(r"[0-9a-f]+", text):
        raise GitiveError(f"{prefix!r} is not an obligation id: give at least its first 6 hex characters "
                          "(`gitive owed` lists them)")
    found = table.rows(conn, "WHERE id >= ? AND id < ?", (text, text + "g"))
    if not found:
        raise GitiveError(f"no obligation has an id starting {text}; `gitive owed --all` lists them")
    if len(found) > 1:
        raise GitiveError(f"{len(found)} obligations have ids starting {text}; give more characters")
    return found[0]


def change(hive: Hive, conn: sqlite3.Connection, prefix: str, state: str, *, actor: str,
           expires_in_ms: int = DEFAULT_EXPIRES_MS, note: str | None = None, now: int | None = None,
           unlock: Unlock | None = None) -> dict[str, Any]:
    """Mark an obligation done, cancel it or renew it (signed); return the state record written. A person
    changing an obligation someone else owns signs with their gesture (``unlock`` asks for the key).

    Raises:
        GitiveError: no such obligation, it is not open, or this machine may not change it.
    """
    now = now if now is not None else now_ms()
    me_person, role = _member(conn, hive.me)
    found = resolve(conn, prefix)
    verb = {"done": "mark done", "cancelled": "cancel", "renewed": "renew"}[state]
    if role == "anchor":
        raise GitiveError(f"the anchor cannot {verb} an obligation: a person or its owner does")
    if found["problem"]:
        raise GitiveError(f"obligation {found['id'][:12]} was refused by readers: {found['problem']}")
    if found["state"] != "open":
        raise GitiveError(f"obligation {found['id'][:12]} is already {found['state']}")
    if actor == "agent" and found["owner"] != me_person:
        raise GitiveError(f"an agent cannot {verb} an obligation {found['owner']} owns; {found['owner']} "
                          "or a person at a terminal can")
    body: dict[str, Any] = {"type": "obligation-state", "obligation": found["id"], "state": state, "actor": actor}
    if state == "renewed":
        if not 0 < expires_in_ms <= MAX_EXPIRES_MS:
            raise InvalidRecord("a renewal lasts at most 90 days")
        body["expires"] = now + expires_in_ms
    if note:
        body["note"] = " ".join(note.split())[:500]
    if needs_gesture(actor, me_person, found["owner"]):
        body = person_decision(hive, conn, body, unlock)
    logs.append(hive.store, hive.key, hive.team_id, "team", TEAM_SCOPE, body, at=now)
    table.refresh(conn)
    return body


# --- reading back -----------------------------------------------------------------------------------------


def waits_for(analysis: conditions.Analysis) -> str:
    """What a condition waits for, in a few words: ``vcs.merged where vcs.branch = "auth-rotation"``."""
    keys = analysis.keys
    names = sorted(keys.exact or ()) + [f"{p}*" for p in sorted(keys.prefixes)]
    what = " or ".join(names) if not keys.any else "any event"
    where = ", ".join(f'{p} = {v!r}' for p, v in analysis.equalities.items())
    return what + (f" where {where}" if where else "")


def _can_fire(analysis: conditions.Analysis) -> None:
    """Refuse a condition no anchor can ever see fire, with the reason ``gitive owed`` would give later, and the
    shared action it most likely meant (``vcs.merge`` is a session's own hook; ``vcs.merged`` is seen on fetch).

    Raises:
        InvalidRecord: every action it waits for happens only in a session's own event log.
    """
    reason = static_reason(analysis)
    if reason is None:
        return
    vocab = load()
    shared = [a.name for a in vocab.actions.values() if a.seen != LOCAL]
    hints = [m for name in sorted(analysis.keys.exact or ()) for m in difflib.get_close_matches(name, shared, 1, 0.6)]
    hint = f"; did you mean {hints[0]!r}, which the anchor sees?" if hints else "; see docs/events.md"
    raise InvalidRecord(f"this condition can never fire: {reason}{hint}")


def static_reason(analysis: conditions.Analysis, watchers: set[str] | None = None) -> str | None:
    """Why an anchor can never see an event this condition waits for, or None.

    ``watchers``: the watcher names configured where this runs (None: not known here, as on a member's machine).
    """
    vocab = load()
    if analysis.keys.any:
        return None
    seen = []
    for name in analysis.keys.exact or ():
        action = vocab.action(name)
        seen.append((name, action.seen if action else LOCAL))
    for prefix in analysis.keys.prefixes:
        seen.append((prefix + "*", WATCHER if prefix.startswith(vocab.watcher_prefix) else "shared"))
    if seen and all(s == LOCAL for _, s in seen):
        return (f"it waits only for {', '.join(n for n, _ in seen)}, which happens in a session's own event log "
                "and never reaches an anchor")
    if watchers is not None and seen and all(s in (LOCAL, WATCHER) for _, s in seen):
        wanted = {n[len(vocab.watcher_prefix):].split(".", 1)[0] for n, s in seen if s == WATCHER}
        if wanted and not wanted & watchers:
            return f"no watcher named {', '.join(sorted(wanted))} runs on this anchor (see docs/anchor.md)"
    return None


def evaluation(item: dict[str, Any], anchors: list[str], now: int) -> dict[str, Any]:
    """``{value, reason}``: satisfied, unsatisfied or unverifiable, as this machine can tell."""
    fired = item["firings"].get("condition")
    if fired:
        late = f", late: its event was at {_when(fired['due'])}" if fired["late"] else ""
        return {"value": "satisfied", "reason": f"fired at {_when(fired['at'])} by the anchor{late}"}
    try:
        analysis = conditions.analyse(item["condition"])
    except conditions.ConditionError as exc:
        return {"value": "unverifiable", "reason": f"the condition cannot be evaluated: {exc}"}
    reason = static_reason(analysis)
    if reason:
        return {"value": "unverifiable", "reason": reason}
    if not anchors:
        return {"value": "unverifiable",
                "reason": "no anchor in the team evaluates conditions (an admin runs `gitive invite --anchor`)"}
    verdict = item.get("verdict")
    if verdict and verdict["value"] == "unverifiable":
        return {"value": "unverifiable", "reason": f"{verdict['reason']} (the anchor, {_when(verdict['at'])})"}
    return {"value": "unsatisfied", "reason": f"waiting for {waits_for(analysis)}"}


def _when(ms: int) -> str:
    from gitive.anchor.obligations.events import iso

    return iso(ms)[:16].replace("T", " ") + " UTC"


def state_of(item: dict[str, Any], now: int) -> str:
    """open | fired | past-due | lapsed | done | cancelled (fired, past due and lapsed are derived)."""
    if item["state"] != "open":
        return item["state"]
    if item["expires"] <= now:
        return "lapsed"
    if item["deadline"] is not None and item["deadline"] <= now:
        return "past-due"
    return "fired" if "condition" in item["firings"] else "open"


def anchors(conn: sqlite3.Connection) -> list[str]:
    return [r[0] for r in conn.execute("SELECT machine FROM members WHERE role = 'anchor' AND active = 1")]


def owed(conn: sqlite3.Connection, *, person: str | None = None, project: str | None = None,
         action: str | None = None, include_closed: bool = False, now: int | None = None) -> list[dict[str, Any]]:
    """Obligations with their derived state and evaluation; open ones unless ``include_closed``.

    ``person`` matches the owner or the beneficiary; ``project`` the project it was written in; ``action`` keeps
    those whose condition can match an event with that action.
    """
    now = now if now is not None else now_ms()
    found = anchors(conn)
    out = []
    for item in table.rows(conn, "WHERE problem IS NULL"):
        item["status"] = state_of(item, now)
        if not include_closed and item["status"] in ("done", "cancelled", "lapsed"):
            continue
        if person and person not in (item["owner"], (item["to"] or "").partition("/")[0]):
            continue
        if project and item["project"] != project:
            continue
        if action and not _admits(item["condition"], action):
            continue
        item["evaluation"] = evaluation(item, found, now)
        out.append(item)
    return out


def _admits(condition: str, action: str) -> bool:
    try:
        keys = conditions.analyse(condition).keys
    except conditions.ConditionError:
        return False
    return keys.any or action in (keys.exact or ()) or any(action.startswith(p) for p in keys.prefixes)


def refused(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Obligation records readers refused, and refused state changes: shown, never silently dropped."""
    return [{"id": r["id"], "owner": r["owner"], "author": r["person"], "problem": r["problem"]}
            for r in table.rows(conn, "WHERE problem IS NOT NULL")] + [
        {"id": c["obligation"], "change": c["state"], "author": c["person"], "problem": c["reason"]}
        for c in table.refused_changes(conn)]
