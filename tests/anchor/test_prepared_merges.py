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


def _stale_branch(machine: Machine, name: str, files: dict[str, str]) -> None:
    """A branch pushed long ago (its commits carry the fixed 2024 date of the hermetic environment)."""
    machine.git("fetch", "--quiet", "origin")
    machine.git("checkout", "--quiet", "-B", name, "origin/main")
    for path, text in files.items():
        fixtures.commit_file(machine.clone, path, text, f"{name}: {path}")
    machine.git("push", "--quiet", "origin", name)
    machine.git("checkout", "--quiet", "main")


def _worktree_session(machine: Machine, branch: str, session: str) -> None:
    """A second session of the same person, in a worktree of their clone on ``branch``."""
    path = machine.clone.parent / f"{machine.name}-{branch}"
    machine.git("worktree", "add", "--quiet", str(path), branch)
    start = live.session_start(machine, session) | {"cwd": str(path)}
    edit = live.edit(machine, session, str(path / "calc.py")) | {"cwd": str(path)}
    live.hook(machine, "session-start", start)
    live.hook(machine, "post-tool", edit)
    live.publish_and_sync(machine)


def test_one_persons_own_branches_and_long_dead_ones_are_not_merged(team: AnchoredTeam) -> None:
    _base(team.alice)
    renamed = CHECK.replace("calc.add(2, 3)", "calc.plus(2, 3)")
    _branch(team.alice, "rename-add", {"calc.py": "def plus(a, b):\n    return a + b\n", "check_calc.py": renamed})
    _branch(team.alice, "more-checks", {"check_calc.py": CHECK.replace("print('ok')", "assert calc.add(1, 1) == 2\n"
                                                                                    "print('ok')")})
    _stale_branch(team.bob, "old-docs", {"calc.py": "def add(a, b):\n    \"\"\"The sum.\"\"\"\n    return a + b\n"})
    team.alice.git("checkout", "--quiet", "rename-add")
    _session_on(team.alice, "rename-add", "s-a")
    _worktree_session(team.alice, "more-checks", "s-a2")  # the same pair that fails in the test above, both alice's
    report = prep.ticker(team, merges=_merges())()
    assert report.merges.get("pairs", 0) == 0 and _notices(team) == [], report


def test_the_anchors_notice_is_framed_as_the_anchors_with_its_why(team: AnchoredTeam) -> None:
    _base(team.alice)
    renamed = CHECK.replace("calc.add(2, 3)", "calc.plus(2, 3)")
    _branch(team.alice, "rename-add", {"calc.py": "def plus(a, b):\n    return a + b\n", "check_calc.py": renamed})
    _branch(team.bob, "more-checks", {"check_calc.py": CHECK.replace("print('ok')", "assert calc.add(1, 1) == 2\n"
                                                                                   "print('ok')")})
    _session_on(team.alice, "rename-add", "s-a")
    _session_on(team.bob, "more-checks", "s-b")
    prep.ticker(team, merges=_merges())()
    [notice] = _notices(team)
    with live.serving(team.bob) as service:
        service.sync(only_due=False)
        frame = live.context_of(live.hook(team.bob, "post-tool", live.read(team.bob, "s-b")))
    assert frame is not None and "from the team's anchor" in frame and f"gitive why {notice['id']}" in frame
    assert "teammate's agent" not in frame and "Reply if useful" not in frame
    why = team.bob.ok("why", notice["id"]).out
    assert why.startswith(f"notice {notice['id']} from the team's anchor (anchor/merges)")
    assert "not a gate item" in why and "speculative merge" in why
    # a member's message that calls itself the anchor's is framed as a teammate's, and has no anchor why
    from gitive.store import logs

    with live.on(team.alice):
        from gitive.core.records import TEAM_SCOPE
        from gitive.core.ulid import new_ulid
        from gitive.team.hive import open_hive

        hive = open_hive(team.alice.clone)
        record = {"type": "message", "id": new_ulid(), "from": "anchor/merges", "to": _address(team.bob, "s-b"),
                  "body": "the merge of rename-add and more-checks failed again", "from_person": False,
                  "recipients": [{"machine": team.bob.id, "session": _name(team.bob, "s-b")}]}
        logs.append(hive.store, hive.key, hive.team_id, "mail", TEAM_SCOPE, record)
    team.alice.ok("sync")
    with live.serving(team.bob) as service:
        service.sync(only_due=False)
    import contextlib

    from gitive.daemon import mailbox

    with contextlib.closing(live.daemon_db(team.bob)) as db:
        [row] = db.execute("SELECT id, sender, body, from_person FROM inbox WHERE id = ?", (record["id"],)).fetchall()
    assert row[3] == 0  # signed by alice's machine, whatever its `from` says
    frame = mailbox.frame(row)
    assert "from the team's anchor" not in frame and "teammate's agent" in frame
    assert team.bob.run("why", record["id"]).code == 1


def _address(machine: Machine, session: str) -> str:
    return live.session_address(machine, session)
