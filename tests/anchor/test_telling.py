"""The anchor tells its work in words: its log line and `gitive anchor run --once` name what fired, each
prepared task's step and the gate's decisions; `gitive anchor status` lists drafts and landings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from gitive.anchor.base.context import TickReport
from gitive.anchor.telling import describe
from testing import prepared as prep
from testing.anchor import AnchoredTeam
from testing.machines import Machine

GITIVE = Path(sys.executable).with_name("gitive")


def _gitive(machine: Machine, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    return subprocess.run([str(GITIVE), *args], cwd=machine.clone, env={**env, "GITIVE_HOME": str(machine.home)},
                          text=True, capture_output=True, timeout=300, stdin=subprocess.DEVNULL)


def test_a_tick_is_told_in_words_not_counters() -> None:
    report = TickReport(at=0, idle=False, received=3, events={"log": 11, "ref": 1}, evaluations=2,
                        prepared=[{"task": "3f1c9a0b" * 8, "state": "drafted"}, {"task": "a" * 64, "state": "stale"}],
                        merges={"pairs": 3, "merged": 3, "failures": 1},
                        gate={"decided": {"attention": 1, "digest": 2}, "delivered": 1}, pushed=2)
    line = describe(report)
    assert line is not None and "{" not in line  # no Python dict in the log ({'log': 11} was)
    for words in ("3 new entries ingested", "12 new events (11 log entries, 1 ref movements)",
                  "2 condition evaluations", "task 3f1c9a0b3f1c drafted, tested and pushed for review",
                  "gone stale (its base moved", "3 pairs of pushed branches checked", "1 failing together",
                  "gate: 3 items decided (1 attention, 2 digest), 1 to deliver", "pushed 2 refs"):
        assert words in line, line
    assert describe(TickReport(at=0)) is None  # an idle tick says nothing


def test_anchor_run_and_status_name_the_drafts_it_prepared(team: AnchoredTeam) -> None:
    (team.anchor.home / "anchor.yaml").write_text(prep.yaml_config())
    prep.buggy_project(team.alice)
    handed = _gitive(team.alice, "hand", "--to", "anchor", f"fix add\n{prep.FIX}", "--test", prep.TEST, "--json")
    assert handed.returncode == 0, handed.stderr
    task = json.loads(handed.stdout)["task"]["id"]
    ran = _gitive(team.anchor, "anchor", "run", "--once")
    assert ran.returncode == 0, ran.stderr
    assert f"task {task[:12]} drafted, tested and pushed for review" in " ".join(ran.stdout.split())
    status = _gitive(team.anchor, "anchor", "status")
    text = " ".join(status.stdout.split())
    assert "prepared work: 1 drafted" in text and f"{task[:12]} hive/" in text and "fix add" in text
    shown = json.loads(_gitive(team.anchor, "anchor", "status", "--json").stdout)["prepared"]
    assert shown["counts"] == {"drafted": 1} and shown["tasks"][0]["task"] == task
