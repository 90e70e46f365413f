"""Standing approvals in the anchor's tick: a covered use, its checks, suspensions, and proposals.

- :func:`cover` finds the active standing approval for a draft nobody answered (its kind and repository),
  checks the draft against the perimeter (an attempt outside suspends the approval, and the owner is asked as
  usual) and runs the required checks on the draft (a failure means no cover, no suspension).
- :func:`after_landing` runs the checks again on what landed: a failure suspends the approval.
- :func:`watch` suspends approvals whose uses were reverted, or whose kind got an edit request (a review with
  an edit) since they were made, and proposes one to the owner once a kind's record reaches the threshold.

Suspensions are ``standing-state`` records in the anchor's ledger log, written before anything else happens.
"""

from __future__ import annotations

import shlex
from typing import Any

from gitive.anchor.gate import items
from gitive.anchor.prepared import approvals, sandbox, standing, tasks, workers
from gitive.anchor.prepared.context import Context
from gitive.anchor.prepared.tiers import Authorization
from gitive.core.records import TEAM_SCOPE
from gitive.store import logs, worktrees


def _suspend(ctx: Context, approval: dict[str, Any], reason: str, ref: str) -> None:
    hive = ctx.anchor.hive
    logs.append(hive.store, hive.key, hive.team_id, "ledger", TEAM_SCOPE,
                {"type": "standing-state", "standing": approval["id"], "state": "suspended", "reason": reason,
                 "ref": ref[:200]}, at=ctx.now)
    ctx.anchor._unpushed = True
    _tell(ctx, approval, "standing.suspended", f"{approval['id']}:suspended",
          f"your standing approval for {approval['kind']} suspended itself: {reason} ({ref[:40]})")


def _tell(ctx: Context, approval: dict[str, Any], kind: str, subject: str, title: str) -> None:
    from gitive.anchor.gate import gating

    if isinstance(ctx.gate, gating.Gate):
        ctx.gate.offer_candidate(items.make({"kind": "prepared", "ref": approval["id"]}, kind, subject,
                                            approval["sponsor"], title, ctx.now), approval["sponsor"])


def run_checks(ctx: Context, commit: str, checks: list[str]) -> str | None:
    """The first required check that fails on ``commit`` (or may not run here), or None."""
    if not checks:
        return None
    from gitive.core.home import gitive_home

    repo = ctx.anchor.hive.project
    root = gitive_home() / "worktrees" / "checks"
    path, home = root / commit[:12], workers.fresh_home(root / "homes")
    try:
        worktrees.add(repo, path, commit)
        for check in checks:
            if not ctx.settings.allows_test(check):
                return f"{check!r} is not a test command this anchor runs (prepared.test_commands)"
            done = workers.run(shlex.split(check), path, workers.environment(None, home, {}), 900,
                               policy=sandbox.Policy(ctx.settings.read))
            if done.code != 0:
                return f"{check!r} exited {done.code}"
    finally:
        worktrees.remove(repo, path)
        import shutil

        shutil.rmtree(home, ignore_errors=True)
    return None


def cover(ctx: Context, task: dict[str, Any], draft: dict[str, Any]) -> tuple[dict[str, Any], Authorization] | None:
    """The standing approval covering ``draft``, and the authorization it gives; None when none does."""
    if str(task.get("kind", "")).startswith("security") or (task.get("source") or {}).get("kind") == "security":
        return None
    found = standing.active(ctx.index, ctx.anchor.hive.team_id, ctx.now, task["repo"], task["kind"])
    if not found:
        return None
    approval = found[-1]
    repo = ctx.anchor.hive.project
    base = draft["base"]["commit"]
    outside = standing.outside_perimeter(repo, base, draft["head"], approval["perimeter"])
    if outside:
        if draft["at"] >= approval["created"]:  # an attempt made while it stood (an older draft is just not covered)
            _suspend(ctx, approval, "out-of-perimeter attempt", f"{task['id'][:12]}: {outside}")
        return None
    if run_checks(ctx, draft["head"], approval["perimeter"]["checks"]):
        return None
    return approval, Authorization("standing", approval["id"], draft["diff_hash"], base)


def after_landing(ctx: Context, approval: dict[str, Any], task: dict[str, Any], commit: str) -> None:
    """The use is listed for the sponsor (an info item, in their digest); a failed post-merge check suspends."""
    _tell(ctx, approval, "standing.used", f"{approval['id']}:{task['id']}",
          f"used your standing approval for {approval['kind']}: landed {tasks.branch_name(task)} ({commit[:12]})")
    failed = run_checks(ctx, commit, approval["perimeter"]["checks"])
    if failed:
        _suspend(ctx, approval, "failed post-merge check", f"{commit}: {failed}")


def watch(ctx: Context, found: dict[str, dict[str, Any]], progress: dict[str, list[dict[str, Any]]]) -> None:
    """Suspend on reverts and edit requests; propose an approval where a kind's record earned one."""
    from gitive.store import objects

    repo = ctx.anchor.hive.project
    current = standing.active(ctx.index, ctx.anchor.hive.team_id, ctx.now)
    for approval in current:
        uses = [s for steps in progress.values() for s in steps if s.get("standing") == approval["id"]
                and s["state"] == "landed"]
        commits = [s["commit"] for s in uses if s.get("commit")]
        if commits and objects.reverted(repo, commits, approval["created"]):
            _suspend(ctx, approval, "revert", commits[-1])
            continue
        for task in found.values():
            if task["kind"] != approval["kind"] or task["repo"] != approval["repo"]:
                continue
            edited = [r for r in approvals.reviews(ctx.index, task["id"]) if r["edits"] and r["at"] >= approval["created"]]
            if edited:
                _suspend(ctx, approval, "edit request", task["id"])
                break
    _propose(ctx, found, progress, current)


def _propose(ctx: Context, found: dict[str, dict[str, Any]], progress: dict[str, list[dict[str, Any]]],
             current: list[dict[str, Any]]) -> None:
    from gitive.anchor.gate import gating
    from gitive.store import objects

    if not isinstance(ctx.gate, gating.Gate):
        return
    covered = {(a["repo"], a["kind"]) for a in current}
    kinds = {(t["repo"], t["kind"], t["owner"]) for t in found.values()}
    for repo_id, kind, owner in sorted(kinds):
        if (repo_id, kind) in covered:
            continue
        earned, edited = approvals.earned(found, progress, repo_id, kind, ctx.index)
        if edited or len(earned) < ctx.settings.threshold:
            continue
        landed = [s["commit"] for steps in progress.values() for s in steps if s["state"] == "landed"
                  and s.get("commit") and found.get(s["task"], {}).get("kind") == kind]
        if objects.reverted(ctx.anchor.hive.project, landed, 0):
            continue
        title = (f"{kind} was approved as prepared {len(earned)} times, never edited or reverted: a standing "
                 f"approval could cover it (`gitive standing create --kind {kind} --path GLOB`)")
        ctx.gate.offer_candidate(items.make({"kind": "prepared", "ref": f"standing:{repo_id}:{kind}"},
                                            "standing.proposal", f"{repo_id}:{kind}", owner, title, ctx.now),
                                 owner)
