"""The obligation tools as library functions: ``owe`` (an agent records its own promise) and ``owed`` (read).

An agent's obligation is always its own person's (``actor: agent``); it approves nothing, so an agent may write
it (anchor-spec S-5, A-9). Strings a teammate wrote come back cut and defanged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gitive.capture.framing import defang
from gitive.mcp import shape
from gitive.mcp.memory import opened

MAX_OWED = 50


def _text(value: Any, limit: int = 500) -> str | None:
    return defang(shape.cut(value, limit)) if isinstance(value, str) else None


def view(item: dict[str, Any]) -> dict[str, Any]:
    """One obligation as a tool returns it."""
    firing = item["firings"].get("condition")
    return {
        "id": item["id"][:16], "owner": _text(item["owner"], shape.MAX_NAME), "to": _text(item["to"], shape.MAX_NAME),
        "action": _text(item["action"]), "condition": _text(item["condition"], 600), "status": item["status"],
        "evaluation": {"value": item["evaluation"]["value"], "reason": _text(item["evaluation"]["reason"], 300)},
        "deadline": item["deadline"], "expires": item["expires"], "files": shape.names(item["files"], 10),
        "fired": {"at": firing["at"], "late": firing["late"], "due": firing["due"]} if firing else None,
    }


def owe(repo: Path | str | None, *, to: str, condition: str, action: str, deadline: str | None = None,
        expires: str | None = None, files: list[str] | None = None, session: str | None = None) -> dict[str, Any]:
    """Record that the calling agent's person owes ``action`` to ``to`` once ``condition`` holds.

    The same promise again (same owner, to, condition, action, deadline and files, and still open) is the
    obligation already written: its id comes back with ``created: false`` and nothing is written, so an agent
    that retries a call it saw time out never makes its person owe twice.

    Raises:
        GitiveError: a write-time rule refused it (the message says which and what to change); nothing written.
    """
    from gitive.anchor.obligations import records as obligations

    draft_files = shape.clean_files(files)
    with opened(repo) as (hive, conn, project):
        me = conn.execute("SELECT person FROM members WHERE machine = ?", (hive.me,)).fetchone()
        source: dict[str, Any] = {"kind": "owe"}
        if session:
            source["ref"] = shape.cut(session, shape.MAX_NAME)
        draft = obligations.Draft(
            me[0] if me else "", condition, action, to=to.strip() or None,
            deadline=obligations.parse_deadline(deadline) if deadline else None,
            expires_in_ms=obligations.parse_duration(expires, "expires") if expires else obligations.DEFAULT_EXPIRES_MS,
            files=draft_files, source=source)
        existing = _same_open(conn, draft)
        done = existing or obligations.record(hive, conn, draft, actor="agent", project=project)
    created = existing is None
    if created:
        _share(repo)
    return {"id": done["id"][:16], "created": created, "owner": done["owner"], "to": done.get("to"),
            "expires": done["expires"], "deadline": done.get("deadline"), "files": done.get("files") or [],
            "note": ("recorded as your person's obligation; the team's anchor evaluates the condition and, when "
                     "it holds, puts the action in front of its owner (never as an interruption of its own)")
            if created else "your person already owes exactly this (still open): nothing new was written"}


def _same_open(conn: Any, draft: Any) -> dict[str, Any] | None:
    """The open obligation of the same owner that says exactly what ``draft`` says, if there is one."""
    from gitive.anchor.obligations import records as obligations

    action = " ".join(draft.action.split())
    files = set(draft.files or obligations.files_in(action))
    for item in obligations.owed(conn, person=draft.owner):
        if (item["owner"], item["to"], item["condition"], item["action"], item["deadline"]) == (
                draft.owner, draft.to, draft.condition, action, draft.deadline) and set(item["files"]) == files:
            return item
    return None


def _share(repo: Path | str | None) -> None:
    """Hand the new entry to the daemon's next sync, or push it now when no daemon runs."""
    from gitive.daemon import control
    from gitive.index import sync as syncing
    from gitive.team.hive import open_hive

    if not control.ask("sync", budget=20.0):
        syncing.run(open_hive(repo))


def owed(repo: Path | str | None, *, person: str | None = None, project: bool = False, event: str | None = None,
         limit: int = 20, offset: int = 0) -> dict[str, Any]:
    """Open obligations (by owner or beneficiary, this project's, or those waiting for an event action), one
    page of at most :data:`MAX_OWED`, oldest first; ``total`` counts every match."""
    from gitive.anchor.obligations import records as obligations

    with opened(repo) as (_, conn, project_id):
        found = obligations.owed(conn, person=(person or "").strip() or None,
                                 project=project_id if project else None, action=(event or "").strip() or None)
        anchors = obligations.anchors(conn)
    size, offset = max(1, min(int(limit), MAX_OWED)), max(0, int(offset))
    items = [view(item) for item in found[offset:offset + size]]
    unverifiable = sum(1 for i in found if i["evaluation"]["value"] == "unverifiable")
    note = ("nothing owed" if not found else f"{len(found)} open obligation(s)"
            + (f", {unverifiable} unverifiable (see each one's reason)" if unverifiable else ""))
    if not anchors:
        note += "; the team has no anchor, so no condition is being evaluated"
    return {"obligations": items, "total": len(found), "anchors": len(anchors), "offset": offset,
            "next_offset": offset + size if len(found) > offset + size else None, "note": note}
