"""``who_knows``: from a file, an error text or a topic to the people (and sessions) worth asking.

Three kinds of evidence, each shown as a reason with its count:

- **commits**: recent commits (``HISTORY_DAYS``) to the relevant files, their author emails mapped to roster
  persons through the emails each member's roster entry lists; authors the roster does not know are listed
  apart under ``others``;
- **sessions**: agent sessions that touched those files: this machine's, from its event log (they count for
  this machine's person), and teammates' live ones, from the presence their daemons publish (as of the last
  sync; a session of another project is left out);
- **lessons**: matching lessons (verified or proposed) a person wrote or reviewed.

The relevant files are the ones given; with none given, the files cited by the best matching lessons.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitive.mcp import shape
from gitive.mcp.memory import opened
from gitive.mcp.roster import LIVE_MS, peer_view, session_view
from gitive.mcp.sessions import summarize, touching

HISTORY_DAYS = 90
SESSION_DAYS = 30
LESSON_POOL = 50  # matching lessons considered
FILES_FROM_LESSONS = 10
# Points per unit of evidence. A commit to the very file is the strongest single signal of who knows it, but a
# long history should not drown everything else, hence the cap.
W_COMMIT, MAX_COMMITS = 1.0, 20
W_SESSION, MAX_SESSIONS = 1.0, 10
W_WROTE = 2.0
W_REVIEWED = 1.5


@dataclass
class _Person:
    person: str
    commits: int = 0
    sessions: list[dict[str, Any]] = field(default_factory=list)
    wrote: list[str] = field(default_factory=list)
    reviewed: list[str] = field(default_factory=list)

    def score(self) -> float:
        return (W_COMMIT * min(self.commits, MAX_COMMITS) + W_SESSION * min(len(self.sessions), MAX_SESSIONS)
                + W_WROTE * len(self.wrote) + W_REVIEWED * len(self.reviewed))


@dataclass
class _Evidence:
    """What one call gathered while the hive was open."""

    lessons: list[dict[str, Any]]
    files: list[str]
    source: str  # "given", "lessons" or "none"
    emails: list[str]  # one per recent commit to ``files``
    members: list[dict[str, Any]]
    me: str | None
    root: Path
    project: str
    peers: list[dict[str, Any]]  # verified presence snapshots of teammates' machines


def who_knows(repo: Path | str | None, query: str = "", files: list[str] | None = None, *, limit: int = 10,
              offset: int = 0, now_ms: int | None = None) -> dict[str, Any]:
    """People ranked by how much the evidence says they know about ``query`` and ``files``, with reasons."""
    from gitive.core.clock import now_ms as clock

    now = now_ms if now_ms is not None else clock()
    size, offset, paths = shape.page_size(limit), max(0, int(offset)), shape.clean_files(files)
    text = query[: shape.MAX_QUERY]
    found = _gather(repo, text, paths)
    people, others = _people(found, now)
    ranked = sorted(people.values(), key=lambda p: (-p.score(), p.person))
    rows = [_row(p, found.me, found.files, found.source) for p in ranked]
    return {
        "query": shape.cut(text, 200), "files": shape.names(found.files, shape.MAX_FILES),
        "files_from": found.source, "people": rows[offset:offset + size], "offset": offset,
        "next_offset": offset + size if len(rows) > offset + size else None,
        "others": [{"email": shape.cut(e, shape.MAX_NAME), "commits": n} for e, n in others.most_common(5)],
        "since_days": HISTORY_DAYS, "note": _note(rows, found.files, text, paths),
    }


def who_knows_tool(repo: Path | str | None, query: str = "", files: list[str] | None = None, limit: int = 10,
                   offset: int = 0) -> dict[str, Any]:
    """The MCP ``who_knows``: the answer, and a ``routing`` id to pass to ``send_message`` when it leads to a
    message (:mod:`gitive.mcp.routing`)."""
    from gitive.mcp import routing

    found = who_knows(repo, query, files, limit=limit, offset=offset)
    found["routing"] = routing.remember(found["query"], found["files"], found["people"])
    return found


def _gather(repo: Path | str | None, text: str, paths: list[str]) -> _Evidence:
    from gitive.daemon import presence
    from gitive.index import queries
    from gitive.lessons.recall import search
    from gitive.store import objects
    from gitive.store.repo import workdir

    with opened(repo) as (hive, conn, project):
        lessons = (search(conn, text, files=paths, project=project, include_proposed=True, limit=LESSON_POOL)
                   if text.strip() or paths else [])
        relevant, source = _relevant_files(paths, lessons)
        emails = objects.recent_author_emails(hive.project, relevant, HISTORY_DAYS)
        everyone = queries.members(conn)
        members = [m for m in everyone if m["role"] != "anchor"]
        peers = presence.peers(hive, {m["machine"]: m for m in everyone}) if relevant else []
        return _Evidence(lessons, relevant, source, emails, members, _my_person(hive, members),
                         workdir(hive.project), project, peers)


def _people(found: _Evidence, now: int) -> tuple[dict[str, _Person], Counter[str]]:
    """Each person's evidence, and the commit authors the roster does not know."""
    people: dict[str, _Person] = {}

    def person(name: str) -> _Person:
        return people.setdefault(name, _Person(name))

    by_email = {e.lower(): m["person"] for m in found.members for e in m["emails"]}
    others: Counter[str] = Counter()
    for email in found.emails:
        if email in by_email:
            person(by_email[email]).commits += 1
        else:
            others[email] += 1
    if found.files and found.me:
        for seen, hits in touching(summarize(found.root, now - SESSION_DAYS * 86_400_000), found.files):
            person(found.me).sessions.append(session_view(seen, now, hits))
    for snap, item in _peer_sessions_touching(found, now):
        person(snap["person"]).sessions.append(peer_view(item, snap, now))
    for lesson in found.lessons:
        person(lesson["origin"]).wrote.append(lesson["id"])
        if lesson.get("reviewer"):
            person(lesson["reviewer"]).reviewed.append(lesson["id"])
    return people, others


def _peer_sessions_touching(found: _Evidence, now: int) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """Teammates' live sessions of this project whose files include a relevant one. Their paths are as their
    harness reported them (often absolute on their machine), so a path matches by its relative end."""
    out = []
    for snap in found.peers:
        for item in snap.get("sessions") or []:
            if not isinstance(item, dict) or now - _int(item.get("last_seen")) >= LIVE_MS:
                continue
            if item.get("project") not in (None, found.project):
                continue
            reported = [*(item.get("files") or []), *(item.get("modified") or [])]
            paths = [p for p in reported if isinstance(p, str)]
            if any(_same_file(p, f) for p in paths for f in found.files):
                out.append((snap, item))
    return out


def _same_file(reported: str, relevant: str) -> bool:
    path, wanted = reported.replace("\\", "/"), relevant.rstrip("/")
    return (path == wanted or path.endswith("/" + wanted) or path.startswith(wanted + "/")
            or f"/{wanted}/" in path)


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def _relevant_files(paths: list[str], lessons: list[dict[str, Any]]) -> tuple[list[str], str]:
    if paths:
        return paths, "given"
    cited: dict[str, None] = {}
    for lesson in lessons:
        for path in lesson.get("files") or []:
            cited.setdefault(path, None)
    chosen = list(cited)[:FILES_FROM_LESSONS]
    return chosen, "lessons" if chosen else "none"


def _my_person(hive: Any, members: list[dict[str, Any]]) -> str | None:
    from gitive.errors import KeyFileError

    try:
        me = str(hive.me)
    except KeyFileError:
        return None
    return next((m["person"] for m in members if m["machine"] == me and m["active"]), None)


def _row(p: _Person, me: str | None, files: list[str], source: str) -> dict[str, Any]:
    where = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    whence = " (files cited by matching lessons)" if source == "lessons" else ""
    reasons: list[dict[str, Any]] = []
    if p.commits:
        reasons.append({"kind": "commits", "count": p.commits,
                        "detail": f"{p.commits} commit{_s(p.commits)} to {where}{whence} "
                                  f"in the last {HISTORY_DAYS} days"})
    if p.sessions:
        n = len(p.sessions)
        reasons.append({"kind": "sessions", "count": n,
                        "detail": f"{n} agent session{_s(n)} touched {where}"})
    for kind, ids, verb in (("wrote", p.wrote, "wrote"), ("reviewed", p.reviewed, "reviewed")):
        if ids:
            reasons.append({"kind": kind, "count": len(ids), "lessons": [i[:12] for i in ids[:5]],
                            "detail": f"{verb} {len(ids)} matching lesson{_s(len(ids))}"})
    return {"person": shape.cut(p.person, shape.MAX_NAME), "you": p.person == me,
            "score": round(p.score(), 2),
            "reasons": reasons, "sessions": p.sessions[:5]}


def _s(n: int) -> str:
    return "" if n == 1 else "s"


def _note(rows: list[dict[str, Any]], files: list[str], query: str, given: list[str]) -> str:
    if not query.strip() and not given:
        return "Give a file, an error text or a topic."
    if not rows:
        return ("Nobody on the roster committed to these files lately, and no matching lesson names anyone."
                if files else "No matching lesson, and no file to look up: pass the files involved.")
    return "Ask a person (or one of their sessions) with the reasons above in mind; a score only orders them."
