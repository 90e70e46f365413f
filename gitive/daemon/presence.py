"""Presence: which sessions are live on this machine, published as metadata to ``refs/hive/presence/<me>``.

Built from the local event log (the hooks' records), so it needs no harness cooperation beyond its hooks.
Only metadata leaves the machine: names, repository, branch, head, paths (credential paths filtered), turn
and a one-line ``doing``; never prompts, outputs or diffs.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gitive.capture import events, locate
from gitive.core import canonical
from gitive.core.clock import now_ms
from gitive.core.credentials import is_credential_path
from gitive.daemon import claims
from gitive.store import presence as store_presence
from gitive.store import repo as repos
from gitive.team.hive import Hive
from gitive.team.presence import LIVE_MS, peers

MAX_FILES = 32
TURN_AFTER = {"session.start": "idle", "prompt.submitted": "busy", "tool.completed": "busy", "turn.stop": "idle",
              "approval.requested": "waiting_approval"}


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")[:48] or "session"


def _name_for(conn: sqlite3.Connection, key: str, base: str, taken: set[str]) -> str:
    """A session keeps its name; a new one takes ``base``, ``base-2``, … avoiding names in use."""
    row = conn.execute("SELECT name FROM sessions WHERE key = ?", (key,)).fetchone()
    if row:
        return row[0]
    name, n = base, 1
    while name in taken:
        n += 1
        name = f"{base}-{n}"
    return name


def collect(conn: sqlite3.Connection, taken_by_peers: set[str] | Callable[[], set[str]], now: int | None = None
            ) -> list[dict[str, Any]]:
    """This machine's live sessions from the last 30 minutes of the event log (names made sticky in ``conn``).

    ``taken_by_peers``: the names this person's sessions on other machines use, which a new session's name must
    avoid; a function giving them is called only when a session needs a name (reading peers' presence is most
    of the cost of a call that finds every session named already).
    """
    now = now if now is not None else now_ms()
    state: dict[str, dict[str, Any]] = {}
    for event in events.read(since_ms=now - LIVE_MS):
        session = (event.get("session") or {}).get("id")
        harness = (event.get("harness") or {}).get("name")
        if not session or not harness:
            continue
        key = f"{harness}:{session}"
        item = state.setdefault(key, {"key": key, "harness": harness, "session_id": session, "files": [],
                                      "modified": [], "turn": "idle", "doing": None, "started": event["ts"],
                                      "cwd": None, "ended": False})
        item["last_seen"] = event["ts"]
        item["cwd"] = (event.get("session") or {}).get("working_directory") or item["cwd"]
        action = event.get("event", {}).get("action", "")
        item["turn"] = TURN_AFTER.get(action, item["turn"])
        item["ended"] = action == "session.end"
        if event.get("doing"):
            item["doing"] = str(event["doing"])[:200]
        if isinstance(event.get("plan"), dict) and isinstance(event["plan"].get("open"), int):
            item["open_steps"] = max(0, event["plan"]["open"])  # the newest plan wins: steps get done
        for path in (event.get("file") or {}).get("paths", []):
            if is_credential_path(path):
                continue
            if path in item["files"]:
                item["files"].remove(path)
            item["files"].append(path)
            if (event.get("file") or {}).get("op") == "modify" and path not in item["modified"]:
                item["modified"].append(path)
    taken = {r[0] for r in conn.execute("SELECT name FROM sessions WHERE last_seen > ?", (now - LIVE_MS,))}
    later = taken_by_peers if callable(taken_by_peers) else None
    if later is None:
        taken |= set(taken_by_peers)
    out = []
    for key, item in sorted(state.items(), key=lambda kv: kv[1]["started"]):
        if item["ended"]:
            continue
        found = locate.find(item["cwd"]) if item["cwd"] else None
        root = str(found.toplevel) if found else None
        base = _slug(f"{Path(root or item['cwd'] or 'session').name}-{item['harness']}")
        if later is not None and not conn.execute("SELECT 1 FROM sessions WHERE key = ?", (key,)).fetchone():
            taken |= set(later())  # a new session: its name must avoid the peers' too
            later = None
        name = _name_for(conn, key, base, taken - {r[0] for r in conn.execute(
            "SELECT name FROM sessions WHERE key = ?", (key,))})
        taken.add(name)
        # Unchanged, the row is not written: a read (an MCP inbox check) then commits nothing and syncs no disk
        conn.execute("INSERT INTO sessions VALUES (?,?,?,?,?,?,?) ON CONFLICT(key) DO UPDATE SET "
                     "last_seen = excluded.last_seen, repo = excluded.repo "
                     "WHERE last_seen IS NOT excluded.last_seen OR repo IS NOT excluded.repo",
                     (key, item["harness"], item["session_id"], name, root, item["started"], item["last_seen"]))
        branch, head = repos.head(root) if root else (None, None)
        out.append({
            "name": name, "harness": item["harness"], "session_key": key,
            "repo": root, "project": locate.project_id(found) if found else None,
            "repo_label": Path(root).name if root else None, "branch": branch, "head": head,
            "files": item["files"][-MAX_FILES:], "modified": item["modified"][-MAX_FILES:], "turn": item["turn"],
            "doing": item["doing"], "started": item["started"], "last_seen": item["last_seen"],
            "claims": claims.held(conn, name, now),
        } | ({"open_steps": item["open_steps"]} if "open_steps" in item else {}))
    claims.release_ended(conn, {s["name"] for s in out})
    return out


def snapshot(me: str, person: str, machine_name: str, sessions: list[dict[str, Any]],
             resolved: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """What is published: metadata only (the local repo path becomes its directory name; stuck and resolved
    failures only as signature hashes, gitive/daemon/stuck.py)."""
    public = []
    for s in sessions:
        public.append({k: s[k] for k in ("name", "harness", "project", "repo_label", "branch", "head", "files",
                                         "modified", "turn", "doing", "started", "last_seen")}
                      | {"address": f"{person}/{s['name']}", "claims": s.get("claims") or []}
                      | ({"stuck": list(s["stuck"])} if s.get("stuck") else {})
                      | ({"open_steps": s["open_steps"]} if isinstance(s.get("open_steps"), int) else {}))
    snap = {"machine": me, "person": person, "machine_name": machine_name, "sessions": public}
    if resolved:
        snap["resolved"] = list(resolved)
    return snap


def publish(hive: Hive, snap: dict[str, Any]) -> bool:
    """Write the snapshot to this machine's presence ref if it changed; true when it did."""
    return store_presence.publish(hive.store, hive.key, hive.team_id, canonical.dumps(snap))


def directory(hive: Hive, local: dict[str, Any] | None, members: dict[str, dict[str, Any]],
              now: int | None = None) -> list[dict[str, Any]]:
    """Every known session of the team: this machine's and peers', each with person, machine and liveness."""
    now = now if now is not None else now_ms()
    snaps = ([local] if local else []) + peers(hive, members)
    rows = []
    for snap in snaps:
        for s in snap.get("sessions") or []:
            if not isinstance(s, dict):
                continue
            rows.append(s | {"person": snap["person"], "machine": snap["machine"],
                             "machine_name": snap.get("machine_name"),
                             "live": now - int(s.get("last_seen") or 0) < LIVE_MS})
    return rows
