"""Events in the vocabulary's shape, from each source: log entries, ref movements, presence, clock, watchers.

Every event has ``timestamp``, ``ts``, ``sequence``, ``event {id, action, kind, category, fidelity}`` and
``source {kind, name, trusted}``; the rest is the group its action names (``vcs``, ``session``, ``lesson``,
…). Only metadata goes in: a message event carries ids and addresses, never the body. Lists are cut at
:data:`~gitive.anchor.obligations.conditions.MAX_LIST` items and strings at :data:`MAX_TEXT` characters, which is what
bounds a condition's cost.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

from gitive.anchor.obligations.conditions import MAX_LIST
from gitive.anchor.obligations.vocabulary import load
from gitive.store.watch import Movement

MAX_TEXT = 1_024
MAX_DEPTH = 6


def iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def stable_id(*parts: Any) -> str:
    return hashlib.blake2b(json.dumps(parts, sort_keys=True, default=str).encode(), digest_size=16).hexdigest()


def cap(value: Any, depth: int = 0) -> Any:
    """Bound an event's values: lists, strings and nesting (floats become strings: records hold integers)."""
    if type(value) is dict and depth < MAX_DEPTH and len(value) <= MAX_LIST:
        flat = _flat(value)  # most groups: a few short strings and integers, copied as they are
        if flat is not None:
            return flat
    if isinstance(value, str):
        return value[:MAX_TEXT]
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return value
    if isinstance(value, float):
        return repr(value)
    if depth >= MAX_DEPTH:
        return None
    if isinstance(value, dict):
        return {str(k)[:64]: cap(v, depth + 1) for k, v in list(value.items())[:MAX_LIST]}
    if isinstance(value, list | tuple):
        return [cap(v, depth + 1) for v in list(value)[:MAX_LIST]]
    return str(value)[:MAX_TEXT]


def _flat(value: dict[Any, Any]) -> dict[str, Any] | None:
    """A copy of ``value`` when :func:`cap` would leave every part of it as it is: keys are strings of at most 64
    characters, values exactly None, bools, integers or strings of at most :data:`MAX_TEXT`; else None."""
    out = {}
    for key, item in value.items():
        kind = type(item)
        if type(key) is not str or len(key) > 64 or not (
                item is None or kind is bool or kind is int or (kind is str and len(item) <= MAX_TEXT)):
            return None
        out[key] = item
    return out


def longest_list(value: Any) -> int:
    """The most items any list or map in ``value`` holds: what a condition's comprehensions can iterate."""
    if isinstance(value, dict):
        return max([len(value), *(longest_list(v) for v in value.values())])
    if isinstance(value, list):
        return max([len(value), *(longest_list(v) for v in value)])
    return 0


def make(action: str, ts: int, source: str, name: str, ident: str, *, trusted: bool = False,
         fidelity: str = "observed", sequence: int = 0, **groups: Any) -> dict[str, Any]:
    """One event; ``groups`` are the field groups (``vcs={...}``), empty ones left out."""
    event: dict[str, Any] = {
        "timestamp": iso(ts), "ts": ts, "sequence": sequence,
        "event": {"id": ident, "action": action, "kind": source, "category": action.split(".", 1)[0],
                  "fidelity": fidelity},
        "source": {"kind": source, "name": name, "trusted": trusted},
    }
    for group, fields in groups.items():
        clean = {k: v for k, v in fields.items() if v is not None} if isinstance(fields, dict) else fields
        if clean not in (None, {}):
            event[group] = cap(clean)
    return event


# --- verified log entries -------------------------------------------------------------------------------


def _groups(kind: str, r: dict[str, Any]) -> dict[str, Any]:
    """The metadata of a record, under the group its action names."""
    match kind:
        case "member":
            return {"member": {k: r.get(k) for k in ("person", "machine", "name", "role", "active")}}
        case "team":
            return {"team": {"name": r.get("name")}}
        case "invite":
            return {"invite": {"id": r.get("id"), "role": r.get("role")}}
        case "lesson":
            return {"lesson": {"id": r.get("id"), "kind": r.get("kind"), "tags": r.get("tags")}}
        case "review":
            return {"review": {k: r.get(k) for k in ("about", "approver", "approved")}}
        case "tombstone":
            return {"lesson": {"id": r.get("lesson")}}
        case "citation":
            return {"lesson": {"id": r.get("lesson"), "success": r.get("success")}}
        case "message":
            return {"message": {k: r.get(k) for k in ("id", "from", "to", "reply_to", "from_person")}}
        case "ack":
            return {"message": {"id": r.get("message"), "session": r.get("session")}}
        case "project-member":
            return {"project": {"id": r.get("project"), "person": r.get("person"), "role": r.get("role"),
                                "confirmed": r.get("confirmed")}}
        case "obligation":
            return {"obligation": {k: r.get(k) for k in ("id", "owner", "to", "action", "deadline", "expires")}}
        case "obligation-state":
            return {"obligation": {"id": r.get("obligation"), "state": r.get("state"), "expires": r.get("expires")}}
        case "firing":
            return {"obligation": {"id": r.get("obligation"), "reason": r.get("reason"), "late": r.get("late")}}
        case "routing":
            return {"routing": {"id": r.get("id"), "choice": r.get("choice")}}
        case "routing-outcome":
            return {"routing": {"id": r.get("routing"), "outcome": r.get("outcome")}}
    return {}


def from_entry(entry: dict[str, Any], role: str | None) -> dict[str, Any]:
    """The event of one verified entry (a dict from :func:`gitive.index.queries.verified_entries`)."""
    record, kind = entry["record"], entry["kind"]
    scope = entry.get("scope") or {}
    scope_kind = next(iter(scope), "team")
    return make(load().record_action(kind, record), entry["at"], "log", f"{entry['author'][:12]}/{entry['log']}",
                entry["commit"], trusted=True, sequence=entry["seq"],
                actor={"person": entry.get("person"), "machine": entry["author"], "role": role},
                scope={"kind": scope_kind, "project": scope.get("project")},
                record={"type": kind}, **_groups(kind, record))


# --- ref movements --------------------------------------------------------------------------------------


def from_movement(move: Movement, remote: str, repository: str, ts: int, sequence: int) -> dict[str, Any]:
    action = f"vcs.{move.action}"
    vcs: dict[str, Any] = {"repository": repository, "remote": remote, "commit": move.commit,
                           "previous": move.previous}
    if move.action == "tag_created":
        vcs["tag"] = move.name
    else:
        vcs["branch"] = move.name
    if move.action == "merged":
        vcs.update(into=move.into, tip=move.tip)
    if move.action == "branch_moved":
        vcs["forced"] = move.forced
    fidelity = "inferred" if move.action == "merged" else "observed"
    ident = stable_id("ref", repository, action, move.name, move.into, move.commit, move.previous)
    return make(action, ts, "ref", remote, ident, fidelity=fidelity, sequence=sequence, vcs=vcs)


# --- presence -------------------------------------------------------------------------------------------


def from_session(action: str, machine: str, person: str, session: dict[str, Any], ts: int,
                 sequence: int) -> dict[str, Any]:
    name = str(session.get("name") or "")
    fields = {"id": name, "address": f"{person}/{name}", "person": person, "machine": machine,
              "harness": session.get("harness"), "project": session.get("project"),
              "branch": session.get("branch"), "files": session.get("files"), "turn": session.get("turn")}
    if action == "session.ended" and isinstance(session.get("open_steps"), int):
        fields["open_steps"] = session["open_steps"]
    ident = stable_id("presence", machine, name, action, session.get("started"), session.get("last_seen"))
    return make(action, ts, "presence", machine[:12], ident, sequence=sequence, session=fields)


# --- clock and watchers ---------------------------------------------------------------------------------


def day(ms: int) -> dict[str, Any]:
    when = datetime.fromtimestamp(ms / 1000, UTC)
    date = when.strftime("%Y-%m-%d")
    return make("clock.day", ms, "clock", "clock", stable_id("clock.day", date),
                clock={"date": date, "weekday": when.isoweekday()})


def obligation_clock(action: str, obligation: dict[str, Any], ts: int) -> dict[str, Any]:
    return make(action, ts, "clock", "clock", stable_id(action, obligation["id"], ts),
                obligation={"id": obligation["id"], "owner": obligation["owner"], "to": obligation.get("to"),
                            "action": obligation["action"], "deadline": obligation.get("deadline"),
                            "expires": obligation["expires"]})


def from_watcher(name: str, action: str, data: dict[str, Any], ts: int, sequence: int) -> dict[str, Any]:
    full = f"{load().watcher_prefix}{name}.{action}"
    return make(full, ts, "watcher", name, stable_id("watch", name, ts, sequence, data), sequence=sequence,
                watch={"name": name, "data": data})
