"""Prepared work in the anchor's tick: start tasks, record their drafts, act on approvals, re-ask on a moved base.

Each tick (after the obligations, before the gate), :func:`step`:

1. records what finished since the last tick: each attempt's outcome is a ``prepared`` record in this
   anchor's ledger log, written *before* its item is offered to the gate (a crash never loses an outcome it
   wrote; an attempt that was running when the anchor stopped is started again);
2. starts the tasks of this project that no anchor has started: a ``running`` record first (so a second anchor
   leaves them alone), then the attempt (:func:`gitive.anchor.prepared.drafting.prepare`) on a thread of its own, or in
   the tick itself for ``gitive anchor run --once``; each running task is a session ``anchor/<name>`` in this
   machine's presence, so teammates' agents see it and can write to it;
3. for every draft: the task owner's counted answer to exactly that draft (its ``diff_hash`` on its base,
   :mod:`gitive.anchor.prepared.approvals`). An approval on a base that is still the target's tip lands the change
   (fast-forward) or runs the propose command, through the Approved tier (:mod:`gitive.anchor.prepared.tiers`), which
   checks the hash and the base again. When the base moved before the answer came, or after it, the draft is
   rebased onto the new tip (the old change applied, the tests run again) and the owner is asked again: the old
   review covers nothing on the new base. A skip is counted and leaves the draft where it is.
"""

from __future__ import annotations

import sqlite3
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gitive.anchor.base.context import Gate, Run, Tick, TickReport
from gitive.anchor.gate import items
from gitive.anchor.prepared import approvals, drafting, standing_use, tasks, tiers
from gitive.anchor.prepared.context import Context
from gitive.anchor.prepared.settings import Prepared
from gitive.core.records import TEAM_SCOPE
from gitive.errors import GitiveError
from gitive.index import prepared as prepared_reads
from gitive.store import drafts, logs, worktrees

PRESENCE_REFRESH_MS = 5 * 60_000


@dataclass
class Work:
    """The attempts of one anchor run: running on threads, or done inline (``--once``)."""

    parallel: int
    inline: bool = False
    running: dict[str, tuple[int, Future[drafting.Outcome]]] = field(default_factory=dict)
    published: tuple[str, ...] | None = None
    published_at: int = 0
    _pool: ThreadPoolExecutor | None = None

    def submit(self, job: drafting.Job) -> None:
        if self.inline:
            done: Future[drafting.Outcome] = Future()
            done.set_result(drafting.prepare(job))
            self.running[job.task["id"]] = (job.attempt, done)
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.parallel, thread_name_prefix="gitive-task")
        self.running[job.task["id"]] = (job.attempt, self._pool.submit(drafting.prepare, job))

    def finished(self) -> list[drafting.Outcome]:
        out = []
        for task, (_, fut) in list(self.running.items()):
            if fut.done():
                del self.running[task]
                out.append(fut.result())
        return out

    def busy(self) -> int:
        return sum(1 for _, fut in self.running.values() if not fut.done())


def work_of(anchor: Run) -> Work:
    if anchor.prepared_work is None:
        settings = anchor.config.prepared or Prepared()
        anchor.prepared_work = Work(settings.parallel, inline=anchor.inline)
    return anchor.prepared_work  # type: ignore[no-any-return]


def _remote(anchor: Run, settings: Prepared) -> str | None:
    names = [r for _, r, _ in anchor.watching()]
    if settings.remote:
        return settings.remote if settings.remote in names else None
    return names[0] if names else None


def watched_tip(anchor: Run, remote: str, branch: str) -> str | None:
    return worktrees.tip(anchor.hive.project, f"refs/hive-watch/{remote}/heads/{branch}")


def step(anchor: Run, index: sqlite3.Connection, gate: Gate | None, now: int, report: TickReport) -> None:
    """One tick's prepared work (see the module docstring); problems are reported, never raised."""

    settings = anchor.config.prepared or Prepared()
    remote = _remote(anchor, settings)
    if remote is None:
        return
    ctx = Context(anchor, index, gate, now, settings, remote, report)
    work = work_of(anchor)
    project = anchor.hive.project_id
    found = {t: task for t, task in tasks.all_tasks(index).items() if task["repo"] == project}
    if not found and not work.running:
        return
    progress = prepared_reads.progress(index)
    recorded = set()
    for outcome in work.finished():
        _record(ctx, found.get(outcome.task), outcome, progress)
        recorded.add(outcome.task)  # its new record is not in ``progress`` yet: nothing more for it this tick
    for task_id, task in sorted(found.items(), key=lambda kv: kv[1]["created"]):
        steps = progress.get(task_id, [])
        if task_id in work.running or task_id in recorded:
            continue
        if not steps or (steps[-1]["state"] == "running" and steps[-1]["author"] == anchor.hive.me):
            if work.busy() < work.parallel or work.inline:
                _start(ctx, task, steps, attempt=steps[-1]["attempt"] if steps else 1)
            continue
        draft = tasks.draft_of(steps)
        if draft is not None and draft["author"] == anchor.hive.me:
            _answer(ctx, task, draft, steps)
    for outcome in work.finished():  # inline attempts finish inside the tick
        _record(ctx, found.get(outcome.task), outcome, prepared_reads.progress(index))
    _presence(ctx, found)
    if report.prepared:  # the gate reads what was just written (a draft waiting for review is its urgency)
        from gitive.index.catchup import catch_up

        catch_up(anchor.hive, index)
        progress = prepared_reads.progress(index)
    standing_use.watch(ctx, found, progress)


def _write(ctx: Context, record: dict[str, Any]) -> dict[str, Any]:
    hive = ctx.anchor.hive
    logs.append(hive.store, hive.key, hive.team_id, "ledger", TEAM_SCOPE, record, at=ctx.now)
    ctx.report.prepared.append({"task": record["task"], "state": record["state"]})
    ctx.anchor.unpushed = True
    return record


def _messages(ctx: Context, task: dict[str, Any]) -> list[str]:
    """What teammates' sessions wrote to ``anchor/<name>`` (verified messages addressed to that session)."""
    import json

    name, me = tasks.session_name(task), ctx.anchor.hive.me
    out = []
    for (envelope,) in ctx.index.execute("SELECT envelope FROM admitted_entries WHERE kind = 'message' AND at >= ? "
                                         "ORDER BY at", (task["created"],)):
        record = json.loads(envelope)["body"]["record"]
        if any(r.get("machine") == me and r.get("session") == name for r in record.get("recipients") or []
               if isinstance(r, dict)):
            out.append(f"from {record.get('from')}: {str(record.get('body'))[:2000]}")
    return out


def _start(ctx: Context, task: dict[str, Any], steps: list[dict[str, Any]], attempt: int,
           base: str | None = None, apply: str | None = None) -> None:
    anchor = ctx.anchor
    hive = anchor.hive
    worker_name = task["worker"] if task["worker"] != tasks.DEFAULT_WORKER else ctx.settings.worker
    workers = anchor.config.workers
    worker = workers.get(worker_name) if worker_name else (next(iter(workers.values())) if len(workers) == 1
                                                           else None)
    branch = tasks.branch_name(task)
    start_from = base or task["base"]["commit"]
    if not worktrees.has(hive.project, start_from):
        ctx.report.problems[f"task {task['id'][:12]}"] = (f"the base {start_from[:12]} is not here yet: is "
                                                          f"{task['base']['branch']} pushed?")
        return
    if not steps or steps[-1]["state"] != "running" or steps[-1]["attempt"] != attempt:
        _write(ctx, {"type": "prepared", "task": task["id"], "state": "running", "attempt": attempt,
                     "branch": f"refs/heads/{branch}", "base": {"branch": task["base"]["branch"],
                                                                "commit": start_from}})
    from gitive.core.home import gitive_home

    job = drafting.Job(str(hive.project.path), ctx.remote, task, branch, start_from, attempt, worker, ctx.settings,
                       drafts.Signer(hive.key, hive.team_id), gitive_home() / "worktrees" / task["repo"][:12],
                       replaces=watched_tip(anchor, ctx.remote, branch), apply=apply,
                       messages=_messages(ctx, task), outside=_outside(ctx, task))
    work_of(anchor).submit(job)


def _outside(ctx: Context, task: dict[str, Any]) -> tuple[str, ...]:
    """This anchor's ``prepared.outside`` and the Outside paths the team's admins recorded for the project."""
    from gitive.anchor.prepared import outside_paths

    return (*ctx.settings.outside, *outside_paths.team_paths(ctx.index, ctx.anchor.hive.team_id, task["repo"]))


def _title(task: dict[str, Any]) -> str:
    return task["brief"].strip().splitlines()[0] if task["brief"].strip() else task["id"][:12]


def _offer(ctx: Context, task: dict[str, Any], kind: str, subject: str, title: str,
           about: list[dict[str, str]], files: list[str] | None = None) -> None:
    from gitive.anchor.gate import gating

    if ctx.gate is None or not isinstance(ctx.gate, gating.Gate):
        return
    about = [{"kind": "task", "id": task["id"]}, *about]
    c = items.make({"kind": "prepared", "ref": task["id"]}, kind, subject, task["owner"], title, ctx.now,
                   about=about, files=(files or [])[: items.MAX_FILES])
    ctx.gate.offer_candidate(c, task["owner"])


def _record(ctx: Context, task: dict[str, Any] | None, outcome: drafting.Outcome,
            progress: dict[str, list[dict[str, Any]]]) -> None:
    """Write an attempt's outcome, then offer its item (the record first: a crash never loses it)."""
    if task is None:
        return
    steps = progress.get(task["id"], [])
    if any(s["attempt"] == outcome.attempt and s["state"] not in ("running", "stale") for s in steps):
        return  # recorded already (by this anchor before a crash, or by another)
    record = _write(ctx, outcome.record())
    what = _title(task)
    branch = {"kind": "branch", "id": outcome.branch}
    if outcome.state == "drafted":
        stat = record.get("stat") or {}
        tests = record.get("tests") or {}
        ran = f"; {tests['command']}: exit {tests['before']} before, {tests['after']} after" if tests else ""
        title = (f"draft ready for review on {outcome.branch} ({stat.get('files', 0)} files, +{stat.get('insertions', 0)}"
                 f" -{stat.get('deletions', 0)}{ran}): {what}")
        _offer(ctx, task, "prepared.ready", f"{task['id']}:{outcome.diff_hash}:{outcome.base['commit']}", title,
               [branch, {"kind": "commit", "id": outcome.head or ""}], list(stat.get("paths") or []))
    else:
        why = outcome.question or outcome.reason
        words = {"question": "the anchor needs your decision", "over-budget": "the anchor stopped at its budget",
                 "refused": "the anchor may not do this", "failed": "the anchor could not prepare this"}
        _offer(ctx, task, f"prepared.{outcome.state}", f"{task['id']}:{outcome.state}:{outcome.attempt}",
               f"{words[outcome.state]}: {what} — {why}", [branch])


def _answer(ctx: Context, task: dict[str, Any], draft: dict[str, Any], steps: list[dict[str, Any]]) -> None:
    """Act on the owner's answer to ``draft``, or prepare it again on a moved base."""
    anchor = ctx.anchor
    target = task.get("target") or task["base"]["branch"]
    tip = watched_tip(anchor, ctx.remote, target)
    base = draft["base"]["commit"]
    review = approvals.answer(ctx.index, task, draft, steps)
    if review is not None and not review["approved"]:
        return  # skipped or declined: the draft stays as it is, and is not prepared again
    if tip is None:
        return  # the target branch is gone (or not fetched yet): nothing to act on
    edit = _edit(ctx, task, draft, review) if review is not None else None
    if tip != base:  # the base moved: rebase, re-test, ask again (an old approval covers nothing there)
        _write(ctx, {"type": "prepared", "task": task["id"], "state": "stale", "attempt": draft["attempt"],
                     "base": draft["base"], "reason": f"{target} moved to {tip[:12]}"})
        _start(ctx, task, steps, draft["attempt"] + 1, base=tip, apply=edit or draft["head"])
        return
    if review is None:
        covered = standing_use.cover(ctx, task, draft)
        if covered is not None:
            approval, auth = covered
            if _act(ctx, task, draft, auth, draft["head"], target, {"standing": approval["id"]}):
                standing_use.after_landing(ctx, approval, task, draft["head"])
        return
    if review["edits"] and edit is None:
        _refuse(ctx, task, draft, f"the edit the review names ({review['edits'][:12]}) is not on "
                                  f"hive-edits/{draft['branch'].rsplit('/', 1)[-1]} over the draft")
        return
    _act(ctx, task, draft, approvals.authorization(review), edit or draft["head"], target,
         {"review": approvals.ref_of(review)})


def _edit(ctx: Context, task: dict[str, Any], draft: dict[str, Any], review: dict[str, Any] | None) -> str | None:
    """The owner's edit commit the review names: on ``hive-edits/<name>``, over the draft, with that hash."""
    from gitive.store import diffs

    if review is None or not review["edits"]:
        return None
    name = draft["branch"].removeprefix("refs/heads/hive/")
    commit = watched_tip(ctx.anchor, ctx.remote, f"hive-edits/{name}")
    repo = ctx.anchor.hive.project
    if commit is None or not worktrees.contains(repo, commit, draft["head"]):
        return None
    return commit if diffs.diff_hash(repo, draft["base"]["commit"], commit) == review["edits"] else None


def _refuse(ctx: Context, task: dict[str, Any], draft: dict[str, Any], reason: str) -> None:
    _write(ctx, {"type": "prepared", "task": task["id"], "state": "refused", "attempt": draft["attempt"],
                 "base": draft["base"], "reason": reason[:1000]})
    _offer(ctx, task, "prepared.refused", f"{task['id']}:refused:{draft['attempt']}",
           f"the anchor may not do this: {_title(task)} — {reason}", [{"kind": "branch", "id": draft["branch"]}])


def _act(ctx: Context, task: dict[str, Any], draft: dict[str, Any], auth: tiers.Authorization | None, head: str,
         target: str, by: dict[str, Any]) -> bool:
    """Land or propose ``head`` through the Approved tier; ``by`` names the review or standing approval that
    allowed it (recorded with the result). True when it was done."""
    repo = ctx.anchor.hive.project
    base = draft["base"]["commit"]
    try:
        if ctx.settings.action == "propose":
            out = tiers.propose(repo, auth, base, head, target, _propose_command(ctx, task, draft, target),
                                Path(repo.workdir or repo.path), extra_outside=_outside(ctx, task))
            state, note = "proposed", out
        else:
            tiers.land(repo, ctx.remote, auth, base, head, target, ctx.settings.protected, _outside(ctx, task),
                       key=ctx.anchor.hive.key)
            state, note = "landed", f"landed on {target}"
    except tiers.TierRefused as exc:
        _refuse(ctx, task, draft, str(exc))
        return False
    except GitiveError as exc:  # the target moved meanwhile, or the remote is away: the next tick sees it
        ctx.report.problems[f"task {task['id'][:12]}"] = str(exc)
        return False
    _write(ctx, {"type": "prepared", "task": task["id"], "state": state, "attempt": draft["attempt"],
                 "base": draft["base"], "head": draft["head"], "diff_hash": draft["diff_hash"], **by,
                 "commit": head, "reason": note[:500]})
    if state == "landed":
        worktrees.delete_branch(repo, ctx.remote, draft["branch"])
    _offer(ctx, task, f"prepared.{state}", f"{task['id']}:{state}", f"{note}: {_title(task)}",
           [{"kind": "commit", "id": head}])
    return True


def _propose_command(ctx: Context, task: dict[str, Any], draft: dict[str, Any], target: str) -> list[str]:
    values = {"branch": draft["branch"].removeprefix("refs/heads/"), "target": target, "title": _title(task)[:120],
              "body": f"Prepared by the anchor for task {task['id'][:12]}, approved by {task['owner']}.",
              "task": task["id"], "commit": draft["head"]}
    return [word.format(**values) for word in ctx.settings.propose]


def _presence(ctx: Context, found: dict[str, dict[str, Any]]) -> None:
    """This anchor's running tasks as sessions ``anchor/<name>`` in its presence (republished on change)."""
    from gitive.core import canonical
    from gitive.store import presence as store_presence

    work = work_of(ctx.anchor)
    names = tuple(sorted(tasks.session_name(found[t]) for t in work.running if t in found))
    if names == work.published and ctx.now - work.published_at < PRESENCE_REFRESH_MS:
        return
    if not names and not work.published:
        return
    sessions = []
    for task_id in sorted(work.running):
        task = found.get(task_id)
        if task is None:
            continue
        name = tasks.session_name(task)
        sessions.append({"name": name, "harness": f"anchor:{task['worker']}", "project": task["repo"],
                         "repo_label": Path(ctx.anchor.hive.project.workdir or "repo").name or "repo",
                         "branch": tasks.branch_name(task), "head": task["base"]["commit"], "files": [],
                         "modified": [], "turn": "busy", "doing": _title(task)[:200], "started": task["created"],
                         "last_seen": ctx.now, "address": f"anchor/{name}", "claims": []})
    hive = ctx.anchor.hive
    snap = {"machine": hive.me, "person": "anchor", "machine_name": "anchor", "sessions": sessions}
    store_presence.publish(hive.store, hive.key, hive.team_id, canonical.dumps(snap))
    work.published, work.published_at = names, ctx.now
    ctx.anchor.unpushed = True


class PreparedWork:
    """The tick's step: start tasks, record their drafts, act on approvals, re-ask on a moved base."""

    name = "preparedwork"

    def run(self, tick: Tick) -> None:
        step(tick.run, tick.index, tick.gate, tick.now, tick.report)
