"""One task, worked on: a clean worktree of the base, the tests before, the worker, the tests after, a draft.

:func:`prepare` does the whole of one attempt and returns an :class:`Outcome`; it writes no record (the tick
does, :mod:`gitive.anchor.prepared.work`), so it can run on a thread of its own while the tick goes on. The only
thing it sends anywhere is the draft, pushed to ``refs/heads/hive/<name>`` through the Free tier
(:func:`gitive.anchor.prepared.tiers.push_draft`). The worktree is removed whatever happens.

The worker and the tests run in the sandbox (:mod:`gitive.anchor.prepared.sandbox`), in a worktree whose git
folder is the worker's own (:mod:`gitive.store.workrepo`): no remote, no credentials, nothing to push with.
The anchor pushes, after the worker exits and after checking what it left: no ref beside its task branch, only
commits on top of the base, no nested repository, no Outside path. Whatever the worker commits or leaves
uncommitted, the draft is one commit over the base holding the worktree's files as they are at the end, signed
by the anchor (:mod:`gitive.store.drafts`).
"""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitive.anchor.prepared import sandbox, tiers, workers
from gitive.anchor.prepared.settings import Prepared
from gitive.errors import GitiveError
from gitive.store import diffs, drafts, objects, workrepo, worktrees
from gitive.store import repo as repos

if TYPE_CHECKING:
    from gitive.store.types import Repo

@dataclass
class Outcome:
    task: str
    attempt: int
    state: str  # drafted | failed | over-budget | question | refused
    base: dict[str, str]
    branch: str
    head: str | None = None
    diff_hash: str | None = None
    stat: dict[str, Any] | None = None
    tests: dict[str, Any] = field(default_factory=dict)
    fixes: list[str] = field(default_factory=list)
    question: str = ""
    reason: str = ""
    seconds: float = 0.0

    def record(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "prepared", "task": self.task, "state": self.state, "attempt": self.attempt,
                               "branch": f"refs/heads/{self.branch}", "base": dict(self.base)}
        for key in ("head", "diff_hash", "stat", "question", "reason"):
            value = getattr(self, key)
            if value:
                out[key] = value[:2000] if isinstance(value, str) else value
        if self.tests:
            out["tests"] = dict(self.tests)
        if self.fixes:
            out["fixes"] = self.fixes[:20]
        return out


@dataclass
class Job:
    """Everything one attempt needs, resolved by the tick beforehand (nothing here reads the index)."""

    repo_path: str
    remote: str
    task: dict[str, Any]
    branch: str
    base: str  # the commit to start from (the task's base, or the moved base on a new attempt)
    attempt: int
    worker: workers.Worker | None
    settings: Prepared
    signer: drafts.Signer
    work_root: Path
    replaces: str | None = None  # the branch's tip on the remote now, if any (pushed with a lease on it)
    apply: str | None = None  # a rebase: this commit's change (the old draft) onto the new base, no worker run
    messages: list[str] = field(default_factory=list)  # what teammates sent to anchor/<task>, for the worker
    outside: tuple[str, ...] = ()  # the team's own Outside globs (admin records and ``prepared.outside``)


def _failing(output: str) -> list[str]:
    from gitive.learn.pairs import failing_tests

    return failing_tests(output)


@dataclass(frozen=True)
class Place:
    """Where one attempt runs: the worktree, the worker's home, the anchor's own git folder of the worktree, and
    what the sandbox mounts beside them."""

    path: Path
    home: Path
    admin: Path
    mounts: sandbox.Mounts


def _place(repo: Repo, path: Path, home: Path, base: str) -> Place:
    worktrees.add(repo, path, base)
    admin = workrepo.give(repo, path, home / "git", base)
    mounts = sandbox.Mounts((), read=(workrepo.objects_dir(repo),), hidden=(Path(repo.path).resolve(),))
    return Place(path, home, admin, mounts)


def _test(job: Job, place: Place, env: workers.Environment, deadline: float) -> workers.Run | None:
    """The task's tests, in the sandbox with the worker's and ``prepared.read``'s read-only paths, no network."""
    command = job.task["test"]
    if not command:
        return None
    policy = sandbox.Policy((*(job.worker.policy.read if job.worker else ()), *job.settings.read))
    return workers.run(shlex.split(command), place.path, env, deadline - time.monotonic(), policy=policy,
                       mounts=place.mounts)


def _environment(job: Job, home: Path, with_secrets: bool) -> workers.Environment:
    extra = {"GITIVE_TASK": job.task["id"], "GITIVE_TEST": job.task["test"],
             workers.QUESTION_FILE: str(home / "question.txt")}
    return workers.environment(job.worker if with_secrets else None, home, extra)


def _stdin(job: Job) -> str:
    test = job.task["test"]
    return (f"{job.task['brief'].rstrip()}\n\n---\nYou work on a clean checkout of {job.task['base']['branch']} at "
            f"{job.base[:12]}. " + (f"The change is done when `{test}` passes. " if test else "") +
            "Edit the files; do not push. If a decision only a person can make stops you, write the question to "
            f"${workers.QUESTION_FILE} and exit.\n" +
            "".join(f"\nA teammate wrote to this task's session:\n{m}\n" for m in job.messages[-5:]))


def prepare(job: Job) -> Outcome:
    """Work one attempt of ``job.task`` and push its draft; never raises for the task's own failures."""
    base_meta = {"branch": job.task["base"]["branch"], "commit": job.base}
    out = Outcome(job.task["id"], job.attempt, "failed", base_meta, job.branch)
    start = time.monotonic()
    budget = min(int(job.task["budget"]["wall"]), job.worker.budget if job.worker else workers.DEFAULT_BUDGET)
    deadline = start + budget
    repo = repos.open_at(job.repo_path)
    path = job.work_root / f"{job.task['id'][:12]}-{job.attempt}"
    home = workers.fresh_home(job.work_root / "homes")
    try:
        _attempt(job, repo, path, home, deadline, out)
    except tiers.TierRefused as exc:
        out.state, out.reason = "refused", str(exc)
    except GitiveError as exc:
        out.state, out.reason = "failed", str(exc)
    finally:
        worktrees.remove(repo, path)
        import shutil

        shutil.rmtree(home, ignore_errors=True)
    out.seconds = time.monotonic() - start
    return out


def _attempt(job: Job, repo: Repo, path: Path, home: Path, deadline: float, out: Outcome) -> None:
    if job.worker is None:
        out.state, out.reason = "refused", f"no worker {job.task['worker']!r} is configured on the anchor"
        return
    if job.task["test"] and not job.settings.allows_test(job.task["test"]):
        out.state, out.reason = "refused", (f"the anchor does not run the test command {job.task['test']!r}: "
                                            "its owner adds its first words to `prepared.test_commands`")
        return
    place = _place(repo, path, home, job.base)
    plain = _environment(job, home, with_secrets=False)
    before = _test(job, place, plain, deadline)
    if before is not None and before.over_budget:
        out.state, out.reason = "over-budget", "the budget ran out while the tests ran on the base"
        return
    worktrees.clean(path, place.admin)
    run = _work(job, place, deadline)
    if _stopped(run, out):
        return
    why = workrepo.produced(home / "git", path, job.base, job.branch)
    if why:
        raise tiers.TierRefused(why)
    tree = worktrees.tree_of(path, place.admin)
    if tree == objects.commit_tree(repo, job.base):
        out.reason = "the worker changed nothing"
        return
    after = _test(job, place, plain, deadline)
    if after is not None and after.over_budget:
        out.state, out.reason = "over-budget", "the budget ran out while the tests ran on the draft"
        return
    if before is not None and after is not None:
        out.tests = {"command": job.task["test"], "before": before.code, "after": after.code}
        out.fixes = [t for t in _failing(before.output) if t not in _failing(after.output)]
        if after.code != 0:
            out.reason = f"the tests still fail with the change (exit {after.code}): {after.output.strip()[-300:]}"
            return
    _draft(job, repo, tree, out)


def _work(job: Job, place: Place, deadline: float) -> workers.Run:
    """The worker's run in the sandbox, or (a rebase) the old draft's change applied by the anchor."""
    assert job.worker is not None
    if job.apply and worktrees.apply_change(place.path, job.apply, place.admin):
        return workers.Run(0, 0.0)  # the old draft applies to the moved base: only the tests run again
    return workers.run(job.worker.command, place.path, _environment(job, place.home, with_secrets=True),
                       deadline - time.monotonic(), _stdin(job), place.home / "question.txt",
                       policy=job.worker.policy, mounts=place.mounts)


def _stopped(run: workers.Run, out: Outcome) -> bool:
    """Whether the run ends the attempt (could not start, a question, over budget, a failure), noted in ``out``."""
    if run.problem:
        out.reason = run.problem
    elif run.question:
        out.state, out.question = "question", run.question
    elif run.over_budget:
        out.state, out.reason = "over-budget", f"the worker was stopped at its budget ({int(run.seconds)} s)"
    elif run.code != 0:
        out.reason = f"the worker exited {run.code}: {run.output.strip()[-300:]}"
    else:
        return False
    return True


def _draft(job: Job, repo: Repo, tree: str, out: Outcome) -> None:
    first = job.task["brief"].strip().splitlines()[0][:72]
    tests = out.tests
    text = f"{first}\n\nTask: {job.task['id']}\nAttempt: {job.attempt}\n"
    if tests:
        text += f"Tests: {tests['command']} (before: exit {tests['before']}, after: exit {tests['after']})\n"
    head = drafts.make(repo, job.signer, tree, [job.base], text, int(time.time() * 1000))
    stat = diffs.stat(repo, job.base, head)
    found = tiers.outside(stat.paths, (*job.settings.outside, *job.outside))
    if found:
        raise tiers.TierRefused(f"the change touches {', '.join(found[:5])}: CI, settings and code owners are "
                                "Outside, so the anchor prepares no draft of it")
    tiers.push_draft(repo, job.remote, head, f"refs/heads/{job.branch}", job.replaces, key=job.signer.key)
    out.state, out.head = "drafted", head
    out.diff_hash, out.stat = diffs.diff_hash(repo, job.base, head), stat.as_dict()
