"""``list_team``: the roster by person, and the agent sessions this machine has seen lately.

Sessions of other machines arrive with presence (the daemon publishes it); until then only this machine's
event log is read, and the result says so. Every string is defanged: a teammate's fields side by side must not
open a frame that none of them opens alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gitive.mcp import shape
from gitive.mcp.memory import opened
from gitive.mcp.sessions import Seen, summarize

LIVE_MS = 30 * 60_000  # a session with an event in the last 30 minutes counts as live
PRESENCE_NOTE = ("Sessions listed are this machine's, from its local event log; other machines' sessions "
                 "appear once they publish presence.")


def list_team(repo: Path | str | None, name_filter: str = "", *, include_inactive: bool = False,
              limit: int = 20, offset: int = 0, now_ms: int | None = None) -> dict[str, Any]:
    """Persons of the roster (filtered by a substring of person or machine name), their machines, and which
    is you; one bounded page, plus this machine's live sessions."""
    from gitive.core.clock import now_ms as clock
    from gitive.index import queries
    from gitive.store.repo import workdir

    now = now_ms if now_ms is not None else clock()
    size, offset, needle = shape.page_size(limit), max(0, int(offset)), name_filter.strip().lower()
    with opened(repo) as (hive, conn, _):
        members = queries.members(conn)
        root = workdir(hive.project)
        me = _my_machine(hive)
    people: dict[str, list[dict[str, Any]]] = {}
    for m in members:
        if (m["active"] or include_inactive) and (not needle or needle in m["person"] or needle in m["name"].lower()):
            people.setdefault(m["person"], []).append(m)
    rows = [_person(person, machines, me) for person, machines in sorted(people.items())]
    live = [s for s in summarize(root, now - LIVE_MS) if not s.ended]
    return {"people": rows[offset:offset + size], "offset": offset,
            "next_offset": offset + size if len(rows) > offset + size else None, "total": len(rows),
            "sessions": [session_view(s, now) for s in live[: shape.MAX_LIST]], "note": PRESENCE_NOTE}


def _my_machine(hive: Any) -> str | None:
    from gitive.errors import KeyFileError

    try:
        return str(hive.me)
    except KeyFileError:
        return None


def _person(person: str, machines: list[dict[str, Any]], me: str | None) -> dict[str, Any]:
    return {
        "person": shape.cut(person, shape.MAX_NAME),
        "you": any(m["machine"] == me for m in machines),
        "active": any(m["active"] for m in machines),
        "machines": [{"name": shape.cut(m["name"], shape.MAX_NAME), "machine": m["machine"][:12],
                      "role": shape.cut(m["role"], shape.MAX_NAME), "active": m["active"]}
                     for m in machines[: shape.MAX_LIST]],
    }


def session_view(seen: Seen, now: int, files: dict[str, int] | None = None) -> dict[str, Any]:
    """A session as a tool shows it: id, harness, minutes since last seen, this repository or not, files."""
    touched = files if files is not None else seen.files
    top = sorted(touched.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    return {"session": shape.cut(seen.session, shape.MAX_NAME), "harness": shape.cut(seen.harness, shape.MAX_NAME),
            "last_seen_minutes_ago": max(0, (now - seen.last_ms) // 60_000), "in_this_repo": seen.in_repo,
            "files": [shape.cut(path, shape.MAX_NAME) for path, _ in top]}
