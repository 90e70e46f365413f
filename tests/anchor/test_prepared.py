"""Prepared work on real repositories: tasks handed, the worker on a clean worktree, drafts on hive/ branches."""

from __future__ import annotations

import json
from typing import Any

import pygit2

from testing import prepared as prep
from testing.anchor import AnchoredTeam
from testing.machines import one_line_error


def _draft(team: AnchoredTeam, task: dict[str, Any]) -> dict[str, Any]:
    [draft] = [r for r in prep.prepared_records(team.anchor) if r["task"] == task["id"] and r["state"] == "drafted"]
    return draft


def test_a_handed_task_becomes_a_signed_draft_on_its_hive_branch(team: AnchoredTeam) -> None:
    base = prep.buggy_project(team.alice)
    task = prep.hand(team.alice)
    assert task["base"] == {"branch": "main", "commit": base} and task["owner"] == "alice"
    assert task["test"] == prep.TEST and task["source"] == {"kind": "hand"}
    report = prep.ticker(team)()
    states = [r["state"] for r in prep.prepared_records(team.anchor)]
    assert states == ["running", "drafted"], report.problems
    draft = _draft(team, task)
    assert draft["tests"] == {"command": prep.TEST, "before": 1, "after": 0}
    assert draft["stat"]["paths"] == ["calc.py"] and draft["base"]["commit"] == base
    head = prep.remote_tip(team, draft["branch"])
    assert head == draft["head"]
    repo = pygit2.Repository(str(team.remote))
    commit = repo[head]
    assert [str(p) for p in commit.parent_ids] == [base]
    from gitive.store import diffs, drafts

    assert drafts.signer_of(commit, team.anchor.team_id) == team.anchor.id
    assert diffs.diff_hash(repo, base, head) == draft["diff_hash"]
    assert "a + b" in repo[commit.tree["calc.py"].id].data.decode()
    # nothing else moved: main is where it was, and no worktree is left behind
    assert prep.remote_tip(team, "refs/heads/main") == base
    assert "worktree" not in team.anchor.git("worktree", "list")[len(str(team.anchor.clone)):]


def test_hand_refuses_a_branch_the_remote_lacks_and_writes_nothing(team: AnchoredTeam) -> None:
    team.alice.git("checkout", "--quiet", "-b", "local-only")
    result = team.alice.run("hand", "--to", "anchor", "fix it")
    one_line_error(result, "push it first")
    result = team.alice.run("hand", "--to", "bob", "fix it", "--base", "main")
    one_line_error(result, "gitive handoff")
    assert not prep.prepared_records(team.anchor)


def test_a_worker_question_stops_the_task_and_asks_its_owner(team: AnchoredTeam) -> None:
    prep.buggy_project(team.alice)
    task = prep.hand(team.alice, "fix add\nask: may I change the public signature of add?")
    prep.ticker(team)()
    last = prep.prepared_records(team.anchor)[-1]
    assert last["state"] == "question" and last["question"] == "may I change the public signature of add?"
    assert prep.remote_tip(team, f"refs/heads/hive/fix-add-{task['id'][:8]}") is None


def test_over_budget_stops_the_run_and_becomes_an_item(team: AnchoredTeam) -> None:
    prep.buggy_project(team.alice)
    prep.hand(team.alice, f"fix add\nsleep: 30\n{prep.FIX}", "--budget", "1m")
    tick = prep.ticker(team)
    from gitive.anchor.workers import Worker

    tick.anchor.config.workers["fix"] = Worker("fix", tick.anchor.config.workers["fix"].command, (), 2)
    report = tick()
    last = prep.prepared_records(team.anchor)[-1]
    assert last["state"] == "over-budget", last
    assert any(d["branch"] for d in report.gate.get("decisions", [])), report.gate


def test_the_worker_gets_only_the_listed_secrets_and_its_log_shows_none(team: AnchoredTeam, tmp_path: Any,
                                                                        monkeypatch: Any) -> None:
    prep.buggy_project(team.alice)
    seen = tmp_path / "env.txt"
    prep.hand(team.alice, f"fix add\nenv: {seen}\nprint-env: API_TOKEN\n{prep.FIX}")
    monkeypatch.setenv("API_TOKEN", "s3cret-value-123")
    monkeypatch.setenv("UNLISTED_SECRET", "do-not-pass")
    tick = prep.ticker(team)
    from gitive.anchor.workers import Worker

    tick.anchor.config.workers["fix"] = Worker("fix", tick.anchor.config.workers["fix"].command, ("API_TOKEN",), 60)
    tick()
    names = set(seen.read_text().split())
    assert "API_TOKEN" in names and "UNLISTED_SECRET" not in names and "GITIVE_HOME" not in names
    records = json.dumps(prep.prepared_records(team.anchor))
    assert "s3cret-value-123" not in records
    assert prep.prepared_records(team.anchor)[-1]["state"] == "drafted"
