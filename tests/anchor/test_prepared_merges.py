"""Speculative merges on real repositories: two pushed branches that merge cleanly and fail the tests together
give exactly one notice to each session working on them (delivered at its next turn through the real hook and
daemon); a conflicting pair is told too; a passing pair, and an unchanged pair on the next pass, give nothing."""

from __future__ import annotations

from typing import Any

from testing import fixtures, live
from testing import prepared as prep
from testing.anchor import AnchoredTeam, dated_now
from testing.machines import Machine

PAD = "".join(f"# line {i}\n" for i in range(12))
CHECK = f"import calc\n{PAD}assert calc.add(2, 3) == 5\n{PAD}print('ok')\n"
MERGE_TEST = "python3 check_calc.py"


def _base(machine: Machine) -> None:
    with dated_now():
        fixtures.commit_file(machine.clone, "calc.py", "def add(a, b):\n    return a + b\n", "calc")
        fixtures.commit_file(machine.clone, "check_calc.py", CHECK, "its check")
        machine.git("push", "--quiet", "origin", "main")


def _branch(machine: Machine, name: str, files: dict[str, str]) -> None:
    with dated_now():
        machine.git("fetch", "--quiet", "origin")
        machine.git("checkout", "--quiet", "-B", name, "origin/main")
        for path, text in files.items():
            fixtures.commit_file(machine.clone, path, text, f"{name}: {path}")
        machine.git("push", "--quiet", "origin", name)


def _session_on(machine: Machine, branch: str, session: str) -> None:
    machine.git("checkout", "--quiet", branch)
    live.hook(machine, "session-start", live.session_start(machine, session))
    live.hook(machine, "post-tool", live.edit(machine, session, "calc.py"))
    live.publish_and_sync(machine)


def _notices(team: AnchoredTeam) -> list[dict[str, Any]]:
    from gitive.store import logs, refs

    return [e.body["record"] for e in logs.entries(team.anchor.repo, refs.log_ref(team.anchor.id, "mail"))
            if e.kind == "message" and e.body["record"]["from"] == "anchor/merges"]


def test_a_pair_failing_together_tells_each_session_once_and_a_passing_pair_nothing(team: AnchoredTeam) -> None:
    _base(team.alice)
    renamed = CHECK.replace("calc.add(2, 3)", "calc.plus(2, 3)")
    _branch(team.alice, "rename-add", {"calc.py": "def plus(a, b):\n    return a + b\n", "check_calc.py": renamed})
    _branch(team.bob, "more-checks", {"check_calc.py": CHECK.replace("print('ok')", "assert calc.add(1, 1) == 2\n"
                                                                                   "print('ok')")})
    _branch(team.bob, "docs-only", {"calc.py": "def add(a, b):\n    \"\"\"The sum.\"\"\"\n    return a + b\n"})
    _branch(team.bob, "comment", {"check_calc.py": CHECK.replace("# line 1\n", "# line one\n")})
    _session_on(team.alice, "rename-add", "s-a")
    _session_on(team.bob, "more-checks", "s-b")
    tick = prep.ticker(team, merges=_merges())
    report = tick()
    notices = _notices(team)
    assert report.merges["pairs"] == 4, report  # the pairs that share calc.py or check_calc.py
    [notice] = [n for n in notices if "more-checks" in n["body"] and "rename-add" in n["body"]]
    assert "fails on the merge" in notice["body"]
    assert sorted(r["session"] for r in notice["recipients"]) == sorted(
        {_name(team.alice, "s-a"), _name(team.bob, "s-b")})
    # the passing pairs (comment with either) told nobody; docs-only and rename-add conflict: rename-add's
    # session is told of that one too, in a notice of its own
    assert report.merges["failures"] == 2 and not [n for n in notices if "comment" in n["body"]]
    [conflict] = [n for n in notices if "docs-only" in n["body"]]
    assert "conflicts in calc.py" in conflict["body"]
    assert [r["session"] for r in conflict["recipients"]] == [_name(team.alice, "s-a")]
    # an unchanged pair is not merged again, and nobody is told twice
    again = prep.ticker(team, merges=_merges(every=1))
    import time

    time.sleep(1.1)
    report = again()
    assert len(_notices(team)) == 2 and report.merges == {}
    # delivered at bob's session's next turn, through its daemon
    with live.serving(team.bob) as service:
        service.sync(only_due=False)
        frame = live.context_of(live.hook(team.bob, "post-tool", live.read(team.bob, "s-b")))
    assert frame is not None and "speculative merge" in frame and "anchor/merges" in frame


def _merges(every: float = 300) -> Any:
    from gitive.anchor.prepared.settings import Merges

    return Merges(test=MERGE_TEST, every=every)


def _name(machine: Machine, session: str) -> str:
    return live.session_address(machine, session).split("/", 1)[1]
