"""Tasks: work handed to the anchor, and where each one stands.

A task is a record in the hander's team log (``gitive hand``, ``gitive handoff --to anchor``; or the anchor's
own ledger, for an obligation's action or a watcher): the project, the base (branch and commit, as the remote
has it), a brief, the test command, the worker and a budget. The anchor's work on it is a chain of ``prepared``
records in its ledger log (docs/prepared.md): ``running`` → ``drafted`` (a draft on ``refs/heads/hive/<name>``)
→ ``landed`` or ``proposed``; or ``failed``, ``over-budget``, ``question``, ``refused``; ``stale`` when the
base moved and the draft was prepared again (a new attempt).
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gitive.core.clock import now_ms
from gitive.core.ids import is_name, record_id
from gitive.core.records import TEAM_SCOPE, check_record
from gitive.errors import GitiveError, InvalidRecord
from gitive.index.prepared import verified_of_kind

if TYPE_CHECKING:
    from gitive.team.hive import Hive

DEFAULT_WORKER = "default"  # the anchor config's `prepared.worker`
DEFAULT_BUDGET_S = 1800
MAX_BUDGET_S = 24 * 3600
MAX_BRIEF = 48 * 1024
SOURCES = ("hand", "handoff", "obligation", "watcher")
FINAL = ("landed", "proposed", "failed", "over-budget", "question", "refused")
_SLUG = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class Draft:
    brief: str
    base_branch: str
    base_commit: str
    test: str = ""
    worker: str = DEFAULT_WORKER
    kind: str = ""
    budget_s: int = DEFAULT_BUDGET_S
    owner: str = ""
    target: str = ""
    source: dict[str, str] | None = None
    marker: dict[str, Any] | None = None


def task_id(author: str, record: dict[str, Any]) -> str:
    return record_id("task", author, {k: v for k, v in record.items() if k != "id"})


def branch_name(task: dict[str, Any]) -> str:
    """``hive/<words of the brief>-<id prefix>``: readable, and the same on every machine."""
    words = _SLUG.sub("-", task["brief"].split("\n", 1)[0].lower()).strip("-")[:40].strip("-")
    return f"hive/{words + '-' if words else ''}{task['id'][:8]}"


def session_name(task: dict[str, Any]) -> str:
    """The worker's session in presence: ``anchor/<this>``."""
    return branch_name(task)[len("hive/"):]


def check(draft: Draft, person: str, actor: str, project: str, now: int) -> dict[str, Any]:
    """The task record for ``draft`` (without ``id``), or refuse.

    Raises:
        InvalidRecord: an empty or oversized brief, a bad worker or kind name, a budget out of range.
    """
    if not draft.brief.strip():
        raise InvalidRecord("a task needs a brief: say what to do, or name the failing test")
    size = len(draft.brief.encode())
    if size > MAX_BRIEF:
        raise InvalidRecord(f"the brief is {size:,} bytes, over {MAX_BRIEF // 1024} KiB: shorten it")
    for what, value in (("worker", draft.worker), ("kind", draft.kind or draft.worker), ("owner", draft.owner or
                                                                                         person)):
        if not is_name(value):
            raise InvalidRecord(f"{what} {value!r} is not a name: use 1-64 of a-z, 0-9 and -")
    if not 1 <= draft.budget_s <= MAX_BUDGET_S:
        raise InvalidRecord(f"the budget must be between 1 second and {MAX_BUDGET_S // 3600} hours")
    record: dict[str, Any] = {
        "type": "task", "repo": project, "base": {"branch": draft.base_branch, "commit": draft.base_commit},
        "brief": draft.brief, "test": draft.test.strip(), "worker": draft.worker,
        "kind": draft.kind or draft.worker, "budget": {"wall": draft.budget_s}, "owner": draft.owner or person,
        "created": now, "actor": actor, "source": dict(draft.source or {"kind": "hand"}),
    }
    if draft.target and draft.target != draft.base_branch:
        record["target"] = draft.target
    if draft.marker:
        record["marker"] = dict(draft.marker)
    return record


def record(hive: Hive, conn: sqlite3.Connection, draft: Draft, *, actor: str, project: str,
           now: int | None = None) -> dict[str, Any]:
    """Check and sign a task in this machine's team log; the record written.

    Raises:
        InvalidRecord: see :func:`check`.
        GitiveError: this machine is not an active member, or the owner is not on the roster.
    """
    from gitive.store import logs

    now = now if now is not None else now_ms()
    row = conn.execute("SELECT person, role, active FROM members WHERE machine = ?", (hive.me,)).fetchone()
    if row is None or not row[2]:
        raise GitiveError("this machine is not an active member of the team; ask a member for an invite")
    person = row[0] if row[1] != "anchor" else "anchor"
    body = check(draft, person, actor, project, now)
    people = {r[0] for r in conn.execute("SELECT person FROM members WHERE active = 1 AND role != 'anchor'")}
    if body["owner"] not in people:
        raise GitiveError(f"{body['owner']} is not a person of this team (`gitive team` lists them)")
    body["id"] = task_id(hive.me, body)
    check_record(body)
    log = "ledger" if row[1] == "anchor" else "team"
    logs.append(hive.store, hive.key, hive.team_id, log, TEAM_SCOPE, body, at=now)
    return body


def all_tasks(conn: sqlite3.Connection) -> dict[str, dict[str, Any]]:
    """Every valid task by id: its id matches its content and author, its owner is a person; an anchor's own
    only for an obligation or a watcher (a person hands tasks; an anchor never hands itself one)."""
    out: dict[str, dict[str, Any]] = {}
    for author, role, _, _, at, rec, person in verified_of_kind(conn, "task"):
        if rec.get("id") != task_id(author, rec) or rec["id"] in out:
            continue
        source = (rec.get("source") or {}).get("kind")
        if source not in SOURCES or (role == "anchor") != (source in ("obligation", "watcher")):
            continue
        out[rec["id"]] = {**rec, "author": author, "by": person, "at": at}
    return out


def draft_of(steps: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The newest draft of a task, unless something after it ended or replaced it."""
    for step in reversed(steps):
        if step["state"] == "drafted":
            return step
        if step["state"] in FINAL or step["state"] == "stale":
            return None
    return None


def resolve(conn: sqlite3.Connection, text: str) -> dict[str, Any]:
    """A task by id, id prefix (at least 4 digits) or branch name.

    Raises:
        GitiveError: none or several match.
    """
    found = all_tasks(conn)
    text = text.strip().removeprefix("refs/heads/")
    hits = [t for t in found.values() if (t["id"].startswith(text.lower()) and len(text) >= 4)
            or branch_name(t) == text or branch_name(t) == f"hive/{text}"]
    if not hits:
        raise GitiveError(f"no task {text!r}: `gitive review prepared` lists the ones waiting for you")
    if len(hits) > 1:
        raise GitiveError(f"{text!r} names {len(hits)} tasks: give more of the id")
    return hits[0]


def base_for(hive: Hive, branch: str | None) -> tuple[str, str, str]:
    """(remote, branch, commit) a task starts from: ``branch`` (default: the one checked out) as the remote
    has it (fetched now; as last fetched when the remote cannot be reached), so the anchor can check it out.

    Raises:
        GitiveError: no branch, no remote, or the remote does not have that branch.
    """
    from gitive.store import repo as repos
    from gitive.store import worktrees

    project = hive.project
    name = branch or worktrees.current_branch(project)
    if not name:
        raise GitiveError("no branch is checked out here: name the base with --base BRANCH")
    name = name.removeprefix("refs/heads/")
    remotes = hive.sync_remotes(project) or repos.remotes(project)
    if not remotes:
        raise GitiveError("this repository has no remote: the anchor works from what a remote has")
    for remote in remotes:
        worktrees.fetch_ref(project, remote, f"refs/heads/{name}", f"refs/remotes/{remote}/{name}", timeout=60)
        commit = worktrees.tip(project, f"refs/remotes/{remote}/{name}")
        if commit:
            return remote, name, commit
    raise GitiveError(f"{remotes[0]} has no branch {name!r} as last fetched: push it first "
                      f"(`git push {remotes[0]} {name}`), or name another with --base")


def unpushed(hive: Hive, branch: str, commit: str) -> bool:
    """Whether the local ``branch`` has commits that ``commit`` (the remote's tip) lacks."""
    from gitive.store import worktrees

    local = worktrees.tip(hive.project, f"refs/heads/{branch}")
    return bool(local) and not worktrees.contains(hive.project, commit, local)  # type: ignore[arg-type]
