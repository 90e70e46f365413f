"""Routing records: a ``who_knows`` answer that led to a message, and how the exchange ended.

``who_knows`` answers with a ``routing`` id and keeps its context and candidates on this machine for a day
(``$GITIVE_HOME/routing-pending.json``: nothing leaves the machine for a question nobody followed). When the
agent then messages someone with ``send_message(..., routing=id)``, a signed ``routing`` record goes in this
machine's team log: the context (the question cut to 200 characters and the files), the candidates, the choice
and the message. Outcomes (docs/obligations.md, "Routing"):

- *answered*: the recipient replied to that message; *redirected*: the asker then wrote, on the same routing,
  to someone else; *ignored*: no reply within :data:`IGNORED_AFTER_MS` (all three read from the mail, so every
  machine derives the same);
- *helpful*: the asker says so (``gitive routing mark ID helpful``), a signed ``routing-outcome`` record, which
  also overrides a derived outcome.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from gitive.core.clock import now_ms
from gitive.core.home import ensure_home
from gitive.core.ids import record_id
from gitive.errors import GitiveError

PENDING = "routing-pending.json"
KEEP_MS = 86_400_000
IGNORED_AFTER_MS = 86_400_000


def _path() -> Path:
    return ensure_home() / PENDING


def _load() -> dict[str, Any]:
    try:
        data = json.loads(_path().read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def remember(query: str, files: list[str], people: list[dict[str, Any]]) -> str:
    """Keep one who_knows answer for a day; return the id the agent passes to send_message."""
    now = now_ms()
    candidates = [{"person": p.get("person"), "score": round(float(p.get("score") or 0) * 100)}
                  for p in people[:10]]
    context = {"query": query[:200], "files": files[:20]}
    ident = record_id("routing", context, candidates, now)
    data = {k: v for k, v in _load().items() if isinstance(v, dict) and now - int(v.get("at", 0)) < KEEP_MS}
    data[ident] = {"context": context, "candidates": candidates, "at": now}
    tmp = _path().with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(data, sort_keys=True))
    os.replace(tmp, _path())
    return ident


def pending(routing: str) -> dict[str, Any]:
    """The who_knows answer ``routing`` names.

    Raises:
        GitiveError: the id is unknown here (older than a day, or from another machine).
    """
    found = _load().get(routing)
    if not isinstance(found, dict) or now_ms() - int(found.get("at", 0)) >= KEEP_MS:
        raise GitiveError(f"routing {routing[:12]!r} is not a who_knows answer from this machine in the last day")
    return found


def record_choice(repo: Path | str | None, routing: str, message: str, choice: str, session: str) -> dict[str, Any]:
    """Write the routing record for a message sent on a who_knows answer.

    Raises:
        GitiveError: the id is unknown here (older than a day, or from another machine).
    """
    from gitive.core.records import TEAM_SCOPE
    from gitive.store import logs
    from gitive.team.hive import open_hive

    pending_ = pending(routing)
    record = {"type": "routing", "id": routing, "session": session, "context": pending_["context"],
              "candidates": pending_["candidates"], "choice": choice, "message": message}
    hive = open_hive(repo)
    logs.append(hive.store, hive.key, hive.team_id, "team", TEAM_SCOPE, record)
    return record


def outcomes(conn: sqlite3.Connection, now: int | None = None) -> list[dict[str, Any]]:
    """Every routed question with its outcome, derived from the mail unless the asker recorded one."""
    from gitive.index import queries

    now = now if now is not None else now_ms()
    routed = sorted(queries.verified_entries(conn, kind="routing", limit=1 << 30), key=lambda e: e["at"])
    marked = {e["record"]["routing"]: e["record"]["outcome"]
              for e in sorted(queries.verified_entries(conn, kind="routing-outcome", limit=1 << 30),
                              key=lambda e: e["at"])}
    replies: dict[str, int] = {}
    for m in queries.verified_entries(conn, kind="message", limit=1 << 30):
        reply_to = m["record"].get("reply_to")
        if reply_to:
            replies[reply_to] = min(replies.get(reply_to, m["at"]), m["at"])
    by_routing: dict[str, list[dict[str, Any]]] = {}
    for e in routed:
        by_routing.setdefault(e["record"]["id"], []).append(e)
    out = []
    for ident, sends in by_routing.items():
        for i, e in enumerate(sends):
            record = e["record"]
            answered = replies.get(record["message"])
            if i < len(sends) - 1:
                derived = "redirected"
            elif answered is not None:
                derived = "answered"
            else:
                derived = "ignored" if now - e["at"] > IGNORED_AFTER_MS else "open"
            outcome = marked.get(ident, derived) if i == len(sends) - 1 else derived
            out.append({"routing": ident, "asker": e["person"], "choice": record["choice"], "at": e["at"],
                        "outcome": outcome, "answered_after_ms": answered - e["at"] if answered else None,
                        "candidates": [c.get("person") for c in record["candidates"]]})
    return out


def rates(found: list[dict[str, Any]]) -> dict[str, Any]:
    """Answer and redirect rates (per-mille, integers) over routed questions that have ended."""
    ended = [r for r in found if r["outcome"] != "open"]
    counts = {k: sum(1 for r in ended if r["outcome"] == k) for k in ("answered", "helpful", "redirected", "ignored")}
    total = len(ended)
    times = sorted(r["answered_after_ms"] for r in ended if r["answered_after_ms"] is not None)
    return {"routed": len(found), "ended": total, **counts,
            "answer_rate_permille": (counts["answered"] + counts["helpful"]) * 1000 // total if total else None,
            "redirect_rate_permille": counts["redirected"] * 1000 // total if total else None,
            "median_answer_ms": times[len(times) // 2] if times else None}


def mark(repo: Path | str | None, routing_prefix: str, outcome: str) -> dict[str, Any]:
    """Record how a routed question of this machine ended (signed ``routing-outcome``).

    Raises:
        GitiveError: no routed question of this machine matches, or the outcome is not one of the four.
    """
    from gitive.core.records import ROUTING_OUTCOMES, TEAM_SCOPE
    from gitive.index import queries
    from gitive.index.refresh import fresh_index
    from gitive.store import logs
    from gitive.team.hive import open_hive

    if outcome not in ROUTING_OUTCOMES:
        raise GitiveError(f"outcome {outcome!r} is not one of {', '.join(ROUTING_OUTCOMES)}")
    hive = open_hive(repo)
    with fresh_index(hive) as (conn, _):
        mine = {e["record"]["id"] for e in queries.verified_entries(conn, kind="routing", author=hive.me,
                                                                    limit=1 << 30)}
    found = sorted(i for i in mine if i.startswith(routing_prefix.strip().lower()))
    if len(found) != 1:
        raise GitiveError(f"{'no' if not found else 'several'} routed question(s) of this machine match "
                          f"{routing_prefix!r}; `gitive routing --json` lists them")
    record = {"type": "routing-outcome", "routing": found[0], "outcome": outcome}
    logs.append(hive.store, hive.key, hive.team_id, "team", TEAM_SCOPE, record)
    return record
