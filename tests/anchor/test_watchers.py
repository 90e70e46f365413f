"""Watchers: a command's JSON lines become events; garbage, a hang or a non-zero exit is reported, and the tick goes
on. Conditions on events nobody sees are unverifiable, with the reason, everywhere."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from gitive.anchor import config as anchor_config
from gitive.anchor.base.configuration import Config, Watcher
from testing.anchor import AnchoredTeam, Ticker, owe, owe_unchecked, owed

CI_FAILED = 'e.event.action == "watch.ci.failed" && e.watch.data.job == "lint"'


def _script(tmp_path: Path, name: str, body: str) -> tuple[str, ...]:
    path = tmp_path / f"{name}.py"
    path.write_text(body)
    return (sys.executable, str(path))


def test_watcher_lines_become_events_and_bad_watchers_are_reported(team: AnchoredTeam, tmp_path: Path) -> None:
    record = owe(team.bob, CI_FAILED, "fix the lint job")
    good = _script(tmp_path, "ci", 'import json\nprint("not json")\nprint(json.dumps({"action": "failed", '
                                   '"job": "lint", "pipeline": 7}))\nprint(json.dumps([1, 2]))\n')
    hang = _script(tmp_path, "hang", "import time\ntime.sleep(60)\n")
    crash = _script(tmp_path, "crash", 'import sys\nprint("{\\"action\\": \\"x\\"}")\nsys.exit("boom: token expired")\n')
    watchers = (Watcher("ci", good), Watcher("slow", hang, timeout=0.5), Watcher("broken", crash))
    tick = Ticker(team.anchor, Config(watchers=watchers))
    started = time.monotonic()
    report = tick()
    assert time.monotonic() - started < 30  # the hang was cut at its timeout
    assert [f["obligation"] for f in report.fired] == [record["id"]]
    assert report.fired[0]["event"]["source"] == "watcher"
    assert report.events["watcher"] == 2  # ci's good line and broken's line before it died
    assert "2 line(s) ignored" in report.problems["watcher ci"]
    assert "did not finish within 0.5 s" in report.problems["watcher slow"]
    assert "exited with code 1: boom: token expired" in report.problems["watcher broken"]
    status = team.anchor.json("anchor", "status")
    assert {p["source"] for p in status["problems"]} == {"watcher:ci", "watcher:slow", "watcher:broken"}


def test_a_watcher_runs_at_most_every_n_seconds(team: AnchoredTeam, tmp_path: Path) -> None:
    counter = tmp_path / "runs"
    script = _script(tmp_path, "count", f'open({str(counter)!r}, "a").write("x")\n')
    tick = Ticker(team.anchor, Config(watchers=(Watcher("count", script, every=3600),)))
    tick()
    tick()
    assert counter.read_text() == "x"


def test_a_condition_on_events_nobody_sees_is_unverifiable_with_the_reason(team: AnchoredTeam) -> None:
    refused = team.bob.run("owe", "--when", 'e.event.action == "tool.completed" && e.tool.name == "Bash"',
                           "--do", "say hi")
    assert refused.code == 1 and "can never fire" in refused.err and "never reaches an anchor" in refused.err
    # written past the write-time rule (an older gitive): readers and the anchor still say why it cannot fire
    local = owe_unchecked(team.bob, "bob", 'e.event.action == "tool.completed" && e.tool.name == "Bash"', "say hi")
    watched = owe(team.bob, 'e.event.action == "watch.deploy.finished"', "check the deploy")
    fine = owe(team.bob, 'e.event.action == "vcs.tag_created"', "write release notes")
    [before] = [o for o in owed(team.bob) if o["id"] == local["id"]]
    assert before["evaluation"]["value"] == "unverifiable" and "never reaches an anchor" in before["evaluation"]["reason"]
    report = Ticker(team.anchor, Config(watchers=(Watcher("ci", ("true",)),)))()
    assert {v["obligation"] for v in report.verdicts} == {local["id"], watched["id"]}
    team.bob.ok("sync")
    shown = {o["id"]: o["evaluation"] for o in owed(team.bob)}
    assert shown[watched["id"]]["value"] == "unverifiable"
    assert "no watcher named deploy runs on this anchor" in shown[watched["id"]]["reason"]
    assert shown[fine["id"]]["value"] == "unsatisfied"
    text = team.bob.ok("owed").out
    assert "unverifiable: " in text and "nothing owed" not in text


def test_an_evaluation_error_is_reported_by_the_anchor_and_never_fires(team: AnchoredTeam) -> None:
    record = owe(team.bob, 'e.event.action == "obligation.created" && e.obligation.expires > "soon"', "never")
    report = Ticker(team.anchor)()
    assert report.fired == []
    [verdict] = [v for v in report.verdicts if v["obligation"] == record["id"]]
    assert verdict["value"] == "unverifiable" and "evaluation failed on a obligation.created event" in verdict["reason"]


def test_the_anchor_config_file_is_checked_with_one_line_errors(tmp_path: Path) -> None:
    path = tmp_path / "anchor.yaml"
    for text, message in [("interval: 0\n", "at least 1"), ("watchers: [1]\n", "must map a name"),
                          ("watchers:\n  Bad Name:\n    command: x\n", "is not allowed"),
                          ("watchers:\n  ci:\n    run: x\n", "needs a `command`"),
                          ("nope: 1\n", "unknown keys nope"), (": :\n", "not valid YAML")]:
        path.write_text(text)
        with pytest.raises(anchor_config.ConfigError, match=message):
            anchor_config.load(path)
    path.write_text("interval: 10\nwatchers:\n  ci:\n    command: python3 poll.py --fast\n    every: 60\n")
    loaded = anchor_config.load(path)
    assert loaded.interval == 10 and loaded.watchers[0].command == ("python3", "poll.py", "--fast")
