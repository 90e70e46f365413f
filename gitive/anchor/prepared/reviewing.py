"""A person's review of prepared work, on their own machine: what waits for them, the draft as the remote has
it, and the signed answer (approve, edit, skip).

The draft is fetched from the remote and checked before it is shown: its head must be the one the anchor
recorded and its change must hash to the recorded ``diff_hash`` over the recorded base, so what the person
approves is exactly what the anchor will act on. The answer is a ``review`` record with the person's gesture
(``gitive/index/deciding.py``: refused up front when it would not count), bound to ``diff_hash`` and ``base``.

An edit is the owner's own commit over the draft: pushed to ``refs/heads/hive-edits/<name>`` (the anchor's
``hive/`` branches take only its own drafts), named in the review's ``edits`` by its ``diff_hash`` over the
base, and proposed as a ``Correction`` lesson citing the draft and the edited version.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gitive.anchor.prepared import approvals, tasks
from gitive.core.records import TEAM_SCOPE
from gitive.errors import GitiveError
from gitive.index import prepared as prepared_reads

if TYPE_CHECKING:
    from gitive.core.personkey import Signer
    from gitive.team.hive import Hive

EDIT_PREFIX = "refs/heads/hive-edits/"


@dataclass
class Waiting:
    task: dict[str, Any]
    draft: dict[str, Any]
    answered: bool


def waiting(index: sqlite3.Connection, person: str, project: str | None = None, everything: bool = False
            ) -> list[Waiting]:
    """Drafts whose task ``person`` owns (``everything``: anyone's) and that nobody answered yet, oldest first."""
    found = tasks.all_tasks(index)
    progress = prepared_reads.progress(index)
    out = []
    for task_id, steps in progress.items():
        task = found.get(task_id)
        draft = tasks.draft_of(steps)
        if task is None or draft is None or (project and task["repo"] != project):
            continue
        if task["owner"] != person and not everything:
            continue
        answered = approvals.answer(index, task, draft, steps) is not None
        out.append(Waiting(task, draft, answered))
    return sorted(out, key=lambda w: w.draft["at"])


def _remote(hive: Hive) -> str:
    from gitive.store import repo as repos

    names = hive.sync_remotes(hive.project) or repos.remotes(hive.project)
    if not names:
        raise GitiveError("this repository has no remote to fetch the draft from")
    return names[0]


def fetch(hive: Hive, draft: dict[str, Any]) -> str:
    """Fetch the draft's branch and check it holds exactly what the anchor recorded; its head.

    Raises:
        GitiveError: the branch is gone, or holds something else than the recorded change.
    """
    from gitive.store import diffs, worktrees

    remote = _remote(hive)
    local = f"refs/hive-watch/{remote}/heads/{draft['branch'].removeprefix('refs/heads/')}"
    if not worktrees.fetch_ref(hive.project, remote, draft["branch"], local):
        raise GitiveError(f"{remote} has no {draft['branch']} any more: nothing to review")
    head = worktrees.tip(hive.project, local)
    if head != draft["head"]:
        raise GitiveError(f"{draft['branch']} on {remote} is at {str(head)[:12]}, not the draft the anchor recorded "
                          f"({draft['head'][:12]}): wait for its next record, then review again")
    base = draft["base"]["commit"]
    if diffs.diff_hash(hive.project, base, head) != draft["diff_hash"]:
        raise GitiveError("the draft's change does not hash to what the anchor recorded: refusing to review it")
    return head


def show(hive: Hive, draft: dict[str, Any]) -> str:
    from gitive.store import diffs

    return diffs.patch(hive.project, draft["base"]["commit"], draft["head"])


def _decider(hive: Hive, conn: sqlite3.Connection, task: dict[str, Any], signer: Signer | None,
             key_known: bool) -> str:
    from gitive.errors import NotAllowed
    from gitive.index import deciding

    person = deciding.decider(conn, hive.me, signer, key_known=key_known)
    if person != task["owner"]:
        raise NotAllowed(f"this draft is for {task['owner']} to review; the anchor acts only on its owner's review")
    return person


def check(hive: Hive, conn: sqlite3.Connection, task: dict[str, Any]) -> str:
    """Refuse up front, before the passphrase is asked, an answer that would not count; the person."""
    return _decider(hive, conn, task, None, key_known=False)


def prepare_edit(hive: Hive, task: dict[str, Any], draft: dict[str, Any], rev: str) -> tuple[str, str]:
    """(the edit commit, its diff_hash over the base) for the owner's own commit ``rev`` over the draft.

    Raises:
        GitiveError: ``rev`` is not a commit here, does not descend from the draft, or changes nothing more.
    """
    from gitive.store import diffs, worktrees

    commit = worktrees.tip(hive.project, rev)
    if commit is None:
        raise GitiveError(f"{rev!r} is not a commit in this repository")
    if commit == draft["head"] or not worktrees.contains(hive.project, commit, draft["head"]):
        raise GitiveError(f"your edit must be a commit over the draft {draft['head'][:12]} (check it out with "
                          f"`git checkout -b my-edit {draft['head'][:12]}`, change it, commit, and pass that)")
    edits = diffs.diff_hash(hive.project, draft["base"]["commit"], commit)
    if edits == draft["diff_hash"]:
        raise GitiveError("your commit changes nothing the draft did not: approve the draft instead")
    return commit, edits


def push_edit(hive: Hive, draft: dict[str, Any], commit: str) -> str:
    """Push the owner's edit to ``refs/heads/hive-edits/<name>``; the ref.

    Raises:
        GitiveError: the remote refused it.
    """
    from gitive.store import worktrees

    ref = EDIT_PREFIX + draft["branch"].removeprefix("refs/heads/hive/")
    pushed = worktrees.push(hive.project, _remote(hive), commit, ref, force=True)
    if not pushed.ok:
        raise GitiveError(f"pushing your edit to {ref} was refused: {pushed.detail}")
    return ref


def sign(hive: Hive, conn: sqlite3.Connection, task: dict[str, Any], draft: dict[str, Any], *, approved: bool,
         note: str, signer: Signer | None, edits: str | None = None) -> dict[str, Any]:
    """Write the answer as a review with the person's gesture; the record written.

    Raises:
        NotAllowed: it would not count (an anchor or removed machine, no registered key, not the owner).
    """
    from gitive.index import deciding
    from gitive.store import logs

    person = _decider(hive, conn, task, signer, key_known=True)
    stat = draft.get("stat") or {}
    record: dict[str, Any] = {
        "type": "review", "about": task["id"], "approver": person, "approved": approved, "note": note[:4000],
        "asker": "anchor", "question": f"{tasks.branch_name(task)}: {stat.get('files', 0)} files, "
                                       f"+{stat.get('insertions', 0)} -{stat.get('deletions', 0)}",
        "scope": dict(TEAM_SCOPE), "diff_hash": draft["diff_hash"], "base": draft["base"]["commit"],
    }
    if edits:
        record["edits"] = edits
    done = deciding.signed(hive.team_id, hive.me, record, signer, conn)
    logs.append(hive.store, hive.key, hive.team_id, "team", TEAM_SCOPE, done)
    return done


def correction(hive: Hive, conn: sqlite3.Connection, task: dict[str, Any], draft: dict[str, Any],
               commit: str) -> str | None:
    """Propose the owner's edit as a ``Correction`` lesson, citing the draft and the approved version; its id
    (None when a write-time rule refused it: the review stands anyway)."""
    from gitive.errors import InvalidRecord
    from gitive.lessons.propose import propose
    from gitive.store import worktrees

    words = worktrees.message(hive.project, commit).strip().splitlines()[0][:300]
    text = (f"When preparing \"{tasks.branch_name(task)}\" ({task['brief'].strip().splitlines()[0][:200]}), the "
            f"anchor's draft was corrected by its owner: {words}")
    try:
        done = propose(hive, conn, kind="Correction", text=text[:1200],
                       evidence=[f"commit:{draft['head']}", f"commit:{commit}"], tags=["prepared-edit"],
                       scope="project")
    except InvalidRecord:
        return None
    return str(done.id)
