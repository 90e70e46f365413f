"""Prepared work on real repositories: tasks handed, the worker on a clean worktree, drafts on hive/ branches."""

from __future__ import annotations

import json
from dataclasses import replace
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
    tick.anchor.config.workers["fix"] = replace(tick.anchor.config.workers["fix"], budget=2)
    report = tick()
    last = prep.prepared_records(team.anchor)[-1]
    assert last["state"] == "over-budget", last
    assert any(d["branch"] for d in report.gate.get("decisions", [])), report.gate


def test_the_worker_gets_only_the_listed_secrets_and_its_log_shows_none(team: AnchoredTeam,
                                                                        monkeypatch: Any) -> None:
    prep.buggy_project(team.alice)
    prep.hand(team.alice, f"fix add\nenv: env.txt\nprint-env: API_TOKEN\n{prep.FIX}")
    monkeypatch.setenv("API_TOKEN", "s3cret-value-123")
    monkeypatch.setenv("UNLISTED_SECRET", "do-not-pass")
    tick = prep.ticker(team)
    tick.anchor.config.workers["fix"] = replace(tick.anchor.config.workers["fix"], secrets=("API_TOKEN",))
    tick()
    draft = prep.prepared_records(team.anchor)[-1]["head"]  # the names went into the worktree, so the draft
    team.alice.git("fetch", "--quiet", "origin", prep.prepared_records(team.anchor)[-1]["branch"])
    names = set(team.alice.git("show", f"{draft}:env.txt").split())
    assert "API_TOKEN" in names and "UNLISTED_SECRET" not in names and "GITIVE_HOME" not in names
    records = json.dumps(prep.prepared_records(team.anchor))
    assert "s3cret-value-123" not in records
    assert prep.prepared_records(team.anchor)[-1]["state"] == "drafted"


def _approve(machine: Any, task: dict[str, Any], *args: str) -> Any:
    return machine.decided("review", "prepared", task["id"][:12], *args, "--json")


def _gate_decisions(team: AnchoredTeam) -> list[dict[str, Any]]:
    from tests.anchor.test_gate_tick import ledger_entries

    return ledger_entries(team.anchor)  # either ledger format


def test_an_approved_draft_lands_and_a_moved_base_makes_the_next_approval_stale(team: AnchoredTeam) -> None:
    from testing import fixtures
    from testing.anchor import dated_now

    prep.buggy_project(team.alice)
    task = prep.hand(team.alice)
    tick = prep.ticker(team)
    tick()
    draft = _draft(team, task)
    [decision] = [d for d in _gate_decisions(team) if d["person"] == "alice"]
    assert decision["branch"] == "attention" and decision["because"][0]["rule"] == "review-requested"
    answer = _approve(team.alice, task, "--approve", "--note", "looks right").json()["answers"][0]
    assert answer["review"]["diff_hash"] == draft["diff_hash"] and answer["review"]["base"] == draft["base"]["commit"]
    assert "gesture" in answer["review"]
    tick()
    landed = prep.prepared_records(team.anchor)[-1]
    assert landed["state"] == "landed" and landed["commit"] == draft["head"]
    assert prep.remote_tip(team, "refs/heads/main") == draft["head"]
    assert prep.remote_tip(team, draft["branch"]) is None  # the draft branch is gone once landed
    tick()  # one approval covers one change: nothing more happens
    assert prep.prepared_records(team.anchor)[-1] == landed

    # a second task, approved, then the base moves before the anchor acts
    second = prep.hand(team.alice, "add a note\nwrite: NOTE.md: prepared by the anchor")
    tick()
    first_draft = _draft(team, second)
    _approve(team.alice, second, "--approve")
    team.bob.git("pull", "--quiet", "--ff-only", "origin", "main")
    with dated_now():
        moved = fixtures.commit_file(team.bob.clone, "OTHER.md", "bob's work\n", "bob moves main")
        team.bob.git("push", "--quiet", "origin", "main")
    tick()
    steps = [r for r in prep.prepared_records(team.anchor) if r["task"] == second["id"]]
    assert [s["state"] for s in steps] == ["running", "drafted", "stale", "running", "drafted"]
    again = steps[-1]
    assert again["base"]["commit"] == moved and again["attempt"] == 2 and again["tests"]["after"] == 0
    assert prep.remote_tip(team, "refs/heads/main") == moved  # the old approval covered nothing on the new base
    asked = [d for d in _gate_decisions(team) if d["person"] == "alice" and d["branch"] == "attention"]
    assert len(asked) == 3  # the first draft, the second, and the second again after the base moved
    assert all(d["because"][0]["rule"] == "review-requested" for d in asked)
    assert again["head"] != first_draft["head"]
    _approve(team.alice, second, "--approve")
    tick()
    assert prep.prepared_records(team.anchor)[-1]["state"] == "landed"
    assert prep.remote_tip(team, "refs/heads/main") == again["head"]


def test_an_edit_lands_the_owners_version_and_proposes_a_correction(team: AnchoredTeam) -> None:
    from testing import fixtures

    prep.buggy_project(team.alice)
    task = prep.hand(team.alice)
    tick = prep.ticker(team)
    tick()
    draft = _draft(team, task)
    team.alice.git("fetch", "--quiet", "origin", f"{draft['branch']}:refs/remotes/origin/the-draft")
    team.alice.git("checkout", "--quiet", "-b", "my-edit", draft["head"])
    edit = fixtures.commit_file(team.alice.clone, "calc.py", "def add(a, b):\n    return b + a  # commutes\n",
                                "add: keep the argument order readable")
    answer = _approve(team.alice, task, "--edit", "my-edit").json()["answers"][0]
    from gitive.store import diffs

    assert answer["review"]["edits"] == diffs.diff_hash(team.alice.repo, draft["base"]["commit"], edit)
    assert answer["lesson"]
    lesson = team.alice.json("lessons", "show", answer["lesson"])
    assert lesson["kind"] == "Correction" and lesson["state"] == "proposed"
    assert {e["ref"] for e in lesson["evidence"]} == {draft["head"], edit}
    tick()
    landed = prep.prepared_records(team.anchor)[-1]
    assert landed["state"] == "landed" and landed["commit"] == edit
    assert prep.remote_tip(team, "refs/heads/main") == edit


def test_a_skip_is_counted_and_leaves_the_draft_alone(team: AnchoredTeam) -> None:
    prep.buggy_project(team.alice)
    task = prep.hand(team.alice)
    tick = prep.ticker(team)
    tick()
    _approve(team.alice, task, "--skip", "--note", "not this week")
    tick()
    assert prep.prepared_records(team.anchor)[-1]["state"] == "drafted"
    from gitive.index import prepared as prepared_reads
    from gitive.index.refresh import fresh_index
    from gitive.team.hive import open_hive
    from testing import live

    with live.on(team.anchor), fresh_index(open_hive(team.anchor.clone)) as (conn, _):
        assert prepared_reads.skips(conn, "alice") == 1
    team.alice.ok("sync")
    assert team.alice.json("digest")["prepared"] == {"skipped": 1}  # skips are counted for the digest
    result = team.bob.decide("review", "prepared", task["id"][:12], "--approve")
    assert result.code == 1 and "for alice to review" in result.err


def test_on_threads_the_running_task_is_a_session_in_the_anchors_presence(team: AnchoredTeam) -> None:
    import time

    from gitive.anchor.prepared.tasks import session_name
    from testing import live

    prep.buggy_project(team.alice)
    task = prep.hand(team.alice, f"fix add\nsleep: 3\n{prep.FIX}")
    tick = prep.ticker(team)
    tick.anchor.inline = False  # as a running anchor does: the attempt on a thread, the ticks go on
    tick()
    published = live.published_presence(team.remote, team.anchor)
    assert published is not None and [s["name"] for s in published["sessions"]] == [session_name(task)]
    team.alice.ok("sync")
    assert f"anchor/{session_name(task)}" in team.alice.ok("who").out
    deadline = time.monotonic() + 60
    while prep.prepared_records(team.anchor)[-1]["state"] == "running" and time.monotonic() < deadline:
        time.sleep(0.5)
        tick()
    assert prep.prepared_records(team.anchor)[-1]["state"] == "drafted"
    tick()
    assert live.published_presence(team.remote, team.anchor)["sessions"] == []  # the session ended with the work


def test_the_workers_and_prepared_config_refuse_bad_values_with_one_line(tmp_path: Any) -> None:
    import pytest

    from gitive.anchor.base.configuration import ConfigError
    from gitive.anchor.config import load

    path = tmp_path / "anchor.yaml"
    path.write_text(prep.yaml_config("  action: land\n  parallel: 2\n"))
    found = load(path)
    assert found.workers["fix"].budget == 60 and found.prepared.parallel == 2 and found.prepared.worker == "fix"
    for text, words in (("workers:\n  fix: {budget: 5}\n", "needs a `command`"),
                        ("workers:\n  fix: {command: x, secrets: [1BAD]}\n", "environment variable names"),
                        ("workers:\n  fix: {command: x, budget: 0}\n", "`budget`"),
                        ("prepared:\n  action: propose\n", "needs a `prepared.propose`"),
                        ("prepared:\n  merges: {every: 0}\n", "merges.every"),
                        ("prepared:\n  nope: 1\n", "unknown keys nope")):
        path.write_text(text)
        with pytest.raises(ConfigError, match=words.replace("`", "`").replace(".", r"\.")):
            load(path)
