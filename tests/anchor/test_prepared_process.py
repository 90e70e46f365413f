"""Prepared work end to end with real processes: a bare remote guarded with the anchor option, a person hands a
task (the console script), ``gitive anchor run --once`` works it with the deterministic worker from
``anchor.yaml`` and pushes the draft, the owner approves at a pseudo-terminal, the next anchor run lands it;
a second draft's approval is made stale by a base move, tested again and asked again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from testing import fixtures, people
from testing import prepared as prep
from testing.anchor import AnchoredTeam, dated_now
from testing.lessons import PASSPHRASE_PROMPT, as_person
from testing.machines import Machine

GITIVE = Path(sys.executable).with_name("gitive")


def _gitive(machine: Machine, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    return subprocess.run([str(GITIVE), *args], cwd=machine.clone, env={**env, "GITIVE_HOME": str(machine.home)},
                          text=True, capture_output=True, timeout=300, stdin=subprocess.DEVNULL)


def _anchor_once(team: AnchoredTeam) -> None:
    done = _gitive(team.anchor, "anchor", "run", "--once")
    assert done.returncode == 0, done.stdout + done.stderr


def _approve_at_a_terminal(machine: Machine) -> str:
    people.person_key(machine.home)
    code, out = as_person(machine, "review", "prepared", answers=[
        ("[a]pprove, [e]dit, [s]kip", "a\n"), ("note", "checked the diff\n"),
        ("Sign this approval as yourself?", "y\n"), (PASSPHRASE_PROMPT, people.PASSPHRASE + "\n")], timeout=120)
    assert code == 0, out
    return out


def test_hand_draft_approve_at_a_terminal_land_then_a_stale_approval_is_asked_again(team: AnchoredTeam) -> None:
    assert _gitive(team.alice, "server", "install-hook", str(team.remote), "--team", team.alice.team_id,
                   "--anchor", team.anchor.id).returncode == 0
    (team.anchor.home / "anchor.yaml").write_text(prep.yaml_config())
    base = prep.buggy_project(team.alice)
    handed = _gitive(team.alice, "hand", "--to", "anchor", f"fix add\n{prep.FIX}", "--test", prep.TEST, "--json")
    assert handed.returncode == 0, handed.stderr
    task = json.loads(handed.stdout)["task"]
    _anchor_once(team)
    draft = prep.prepared_records(team.anchor)[-1]
    assert draft["state"] == "drafted" and prep.remote_tip(team, draft["branch"]) == draft["head"]
    out = _approve_at_a_terminal(team.alice)
    assert "a + b" in out and draft["diff_hash"][:16] in out  # the diff and its hash were shown
    _anchor_once(team)
    assert prep.prepared_records(team.anchor)[-1]["state"] == "landed"
    assert prep.remote_tip(team, "refs/heads/main") == draft["head"] != base

    # the second: approved, then bob moves main before the anchor acts
    second = json.loads(_gitive(team.alice, "hand", "--to", "anchor", "add a note\nwrite: NOTE.md: hello",
                                "--test", prep.TEST, "--json").stdout)["task"]
    _anchor_once(team)
    _approve_at_a_terminal(team.alice)
    team.bob.git("pull", "--quiet", "--ff-only", "origin", "main")
    with dated_now():
        moved = fixtures.commit_file(team.bob.clone, "OTHER.md", "bob\n", "bob moves main")
        team.bob.git("push", "--quiet", "origin", "main")
    _anchor_once(team)
    steps = [r for r in prep.prepared_records(team.anchor) if r["task"] == second["id"]]
    assert [s["state"] for s in steps][-3:] == ["stale", "running", "drafted"]
    assert steps[-1]["base"]["commit"] == moved and prep.remote_tip(team, "refs/heads/main") == moved
    listed = _gitive(team.alice, "review", "prepared", "--json", "--skip", second["id"][:12])
    assert listed.returncode == 1 and "terminal" in listed.stderr  # an answer needs a person at a terminal
    assert task["id"] != second["id"]
