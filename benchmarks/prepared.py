"""Prepared-work benchmark: a task handed to the anchor until its draft is pushed, and speculative merges.

    .venv/bin/python benchmarks/prepared.py              # 5 tasks, 20 branches
    .venv/bin/python benchmarks/prepared.py --quick      # 2 tasks, 8 branches

What it builds (in a temp directory, under a minute; nothing cached): a real team on a bare remote through the
CLI (alice founds it, invites an anchor machine, as the tests do with ``testing/anchor.py``), a project with a
bug and a pytest suite of ``--tests`` small tests (so the tests cost what a small real suite costs), and the
anchor configured with the deterministic worker (``testing/fix_worker.py``).

Figures (each against a baseline measured in the same run, with its target):

1. **handed → draft pushed**: after ``gitive hand`` returns (the task is on the remote), the anchor's tick in
   this process (inline, as ``gitive anchor run --once``): fetch, ingest, record, a clean worktree, the tests
   before, the worker, the tests after, the signed draft commit, its push, the records and the gate. Baseline:
   the bare cost of the same worktree, worker and test runs done directly with subprocesses (no gitive), on
   the same commit; medians over ``--tasks`` tasks; target ≤ 1.3×;
2. **speculative merges per minute** for ``--branches`` pushed branches that all touch one common file (every
   pair shares it, so n(n-1)/2 pairs merge cleanly and are tested): one pass of
   :func:`gitive.anchor.prepared.speculative.step` with an empty cache, against the bare cost of the same ``git
   merge-tree`` calls and test runs; reported as merges per minute and as the ratio to the bare cost;
3. **the sandbox's cost**: one short command through bubblewrap (as every worker and test run goes) against the
   same command started directly (the baselines above run unsandboxed, so 1 and 2 include it).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

import _common as c  # noqa: E402


def _hermetic(base: Path) -> None:
    from testing import fixtures

    env, unset = fixtures.hermetic_env(base)
    os.environ.update(env)
    for name in unset:
        os.environ.pop(name, None)
    fixtures.pin_libgit2_config(base)


def _suite(n: int) -> dict[str, str]:
    files = {"calc.py": "def add(a, b):\n    return a - b\n",
             "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"}
    for i in range(n):
        files[f"tests/test_more_{i}.py"] = f"def test_{i}():\n    assert sum(range({i + 10})) >= 0\n"
    files["conftest.py"] = "import sys, os\nsys.path.insert(0, os.path.dirname(__file__))\n"
    return files


def _test_command() -> str:
    return f"{sys.executable} -m pytest -q -p no:cacheprovider tests"


def _build(base: Path, tests: int) -> Any:
    from testing import anchor as anchoring
    from testing import fixtures
    from testing.anchor import dated_now

    with c.step("a team with an anchor (CLI: init, invite --anchor, join)"):
        team = anchoring.build(base / "team")
    with c.step(f"a project with a bug and {tests + 1} tests"), dated_now():
        for path, text in _suite(tests).items():
            fixtures.commit_file(team.alice.clone, path, text, f"add {path}")
        team.alice.git("push", "--quiet", "origin", "main")
    return team


def _config(team: Any) -> Any:
    from gitive.anchor.base.configuration import Config
    from gitive.anchor.prepared.sandbox import Policy
    from gitive.anchor.prepared.settings import Merges, Prepared
    from gitive.anchor.prepared.workers import Worker
    from testing.prepared import READ, WORKER

    prefix = " ".join(_test_command().split()[:3])
    return Config(workers={"fix": Worker("fix", (sys.executable, str(WORKER)), (), 600, Policy(READ))},
                  prepared=Prepared(worker="fix", test_commands=(prefix, "python3 check.py"),
                                    merges=Merges(test="python3 check.py", every=1), read=READ))


def _bare(team: Any, base_commit: str, brief: str, work: Path) -> float:
    """The same worktree, worker and test runs as an attempt, directly (no gitive); seconds."""
    from testing.prepared import WORKER

    path = work / f"bare-{time.monotonic_ns()}"
    env = {"PATH": os.environ["PATH"], "HOME": str(work), "LANG": "C.UTF-8"}
    test = _test_command().split()
    start = time.perf_counter()
    c.git("worktree", "add", "--quiet", "--detach", str(path), base_commit, cwd=team.anchor.clone)
    subprocess.run(test, cwd=path, env=env, capture_output=True, check=False)
    subprocess.run(["git", "reset", "--hard", "--quiet"], cwd=path, check=False)
    subprocess.run(["git", "clean", "-fdxq"], cwd=path, check=False)
    subprocess.run([sys.executable, str(WORKER)], cwd=path, env=env, input=brief.encode(), capture_output=True,
                   check=True)
    subprocess.run(test, cwd=path, env=env, capture_output=True, check=False)
    c.git("worktree", "remove", "--force", str(path), cwd=team.anchor.clone)
    return time.perf_counter() - start


def handed_to_pushed(team: Any, tasks: int, work: Path) -> None:
    from testing import live
    from testing.anchor import Ticker
    from testing.prepared import prepared_records

    tick = Ticker(team.anchor, _config(team))
    tick.anchor.inline = True
    tick()  # a first tick: the index and the state are warm, as on a running anchor
    ours, bare = [], []
    for i in range(tasks):
        brief = f"fix add ({i})\nreplace: calc.py: a - b => a + b\nwrite: notes/{i}.txt: attempt {i}"
        handed = team.alice.run("hand", "--to", "anchor", brief, "--test", _test_command(), "--json")
        assert handed.code == 0, str(handed)
        base = handed.json()["task"]["base"]["commit"]
        seconds, report = c.timed(tick)
        assert prepared_records(team.anchor)[-1]["state"] == "drafted", (prepared_records(team.anchor)[-1], report)
        ours.append(seconds)
        with live.on(team.anchor):
            bare.append(_bare(team, base, brief, work))
    ratio = c.median(ours) / c.median(bare)
    print(f"handed -> draft pushed: {c.ms(c.median(ours))} median over {tasks} tasks; bare worktree + worker + "
          f"tests {c.ms(c.median(bare))}; {ratio:.2f}x (target <= 1.3x: {c.target(ratio <= 1.3)})")


def _branches(team: Any, n: int) -> None:
    from testing import fixtures
    from testing.anchor import dated_now

    pad = "".join(f"# {i}\n# {i}\n# {i}\n# {i}\nVALUE_{i} = {i}\n" for i in range(n))
    with dated_now():
        team.alice.git("pull", "--quiet", "--ff-only", "origin", "main")
        fixtures.commit_file(team.alice.clone, "common.py", pad, "common")
        fixtures.commit_file(team.alice.clone, "check.py", "import common\nprint('ok')\n", "check")
        team.alice.git("push", "--quiet", "origin", "main")
        for i in range(n):
            team.alice.git("checkout", "--quiet", "-B", f"work-{i}", "origin/main")
            fixtures.commit_file(team.alice.clone, "common.py", pad.replace(f"VALUE_{i} = {i}\n",
                                                                            f"VALUE_{i} = {i * 10 + 1}\n"), f"b{i}")
        team.alice.git("push", "--quiet", "origin", *[f"work-{i}" for i in range(n)])
        team.alice.git("checkout", "--quiet", "main")


def merges_per_minute(team: Any, n: int, work: Path) -> None:
    from gitive.anchor.base import state
    from gitive.anchor.prepared import speculative
    from gitive.anchor.tick import TickReport, tick
    from testing import live
    from testing.anchor import Ticker

    with c.step(f"{n} pushed branches touching common.py"):
        _branches(team, n)
    ticker = Ticker(team.anchor, _config(team))
    with live.on(team.anchor):
        tick(ticker.anchor, gate=None)  # fetch the branches (this tick's own pass is skipped below)
    anchor = ticker.anchor
    pairs = n * (n - 1) // 2
    with live.on(team.anchor), state.connect(anchor.state_path) as st:
        st.execute("DELETE FROM cursors WHERE source LIKE 'merge%'")
        from gitive.index.refresh import fresh_index

        with fresh_index(anchor.hive) as (index, _):
            report = TickReport(at=0)
            seconds, found = c.timed(lambda: speculative.step(anchor, st, index, live.now_ms(), report))
    assert found.merged == pairs and not found.failures, (found, report.problems)
    tips = speculative.branches(anchor.hive.project, "origin", anchor.config.prepared.merges)
    main = tips.pop("main")
    names = sorted(tips)
    bare_start = time.perf_counter()
    env = {"PATH": os.environ["PATH"], "HOME": str(work), "LANG": "C.UTF-8"}
    for name in names:  # each tip tested once
        path = work / f"tip-{name}"
        c.git("worktree", "add", "--quiet", "--detach", str(path), tips[name], cwd=team.anchor.clone)
        subprocess.run(["python3", "check.py"], cwd=path, env=env, capture_output=True, check=False)
        c.git("worktree", "remove", "--force", str(path), cwd=team.anchor.clone)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            tree = c.git("merge-tree", "--write-tree", tips[a], tips[b], cwd=team.anchor.clone).split()[0]
            commit = c.git("commit-tree", tree, "-p", tips[a], "-p", tips[b], "-m", "m", cwd=team.anchor.clone).strip()
            path = work / "merged"
            c.git("worktree", "add", "--quiet", "--detach", str(path), commit, cwd=team.anchor.clone)
            subprocess.run(["python3", "check.py"], cwd=path, env=env, capture_output=True, check=False)
            c.git("worktree", "remove", "--force", str(path), cwd=team.anchor.clone)
    bare = time.perf_counter() - bare_start
    del main
    print(f"speculative merges: {pairs} pairs of {n} branches in {seconds:.1f} s = {pairs / seconds * 60:.0f} "
          f"merges/min; bare merge-tree + worktree + tests {bare:.1f} s = {pairs / bare * 60:.0f}/min; "
          f"{seconds / bare:.2f}x the bare cost")


def sandbox_cost(work: Path, runs: int = 20) -> None:
    """What bubblewrap adds to one command: ``python3 -c pass`` through ``workers.run`` against the same command
    started directly, alternating, medians over ``runs``."""
    from gitive.anchor.prepared import sandbox, workers
    from testing.prepared import READ

    home = workers.fresh_home(work / "homes")
    env = workers.environment(None, home, {})
    command = [sys.executable, "-c", "pass"]
    boxed, bare = [], []
    for _ in range(runs):
        seconds, run = c.timed(lambda: workers.run(command, work, env, 60, policy=sandbox.Policy(READ)))
        assert run.code == 0, run
        boxed.append(seconds)
        bare.append(c.timed(lambda: subprocess.run(command, cwd=work, env=env.values, check=True))[0])
    extra = c.median(boxed) - c.median(bare)
    print(f"sandbox: one command {c.ms(c.median(boxed))} in bubblewrap, {c.ms(c.median(bare))} directly; "
          f"+{c.ms(extra)} per command (3 per attempt), median over {runs}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", type=int, default=5)
    parser.add_argument("--tests", type=int, default=30, help="small tests in the project's suite")
    parser.add_argument("--branches", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="2 tasks, 8 branches")
    args = parser.parse_args()
    if args.quick:
        args.tasks, args.branches = 2, 8
    base = Path(tempfile.mkdtemp(prefix="gitive-bench-prepared-"))
    try:
        _hermetic(base / "hermetic")
        os.environ["GITIVE_HOME"] = str(base / "unused-home")
        print(f"prepared work benchmark ({c.load()})", file=sys.stderr)
        team = _build(base, args.tests)
        work = base / "bare"
        work.mkdir()
        handed_to_pushed(team, args.tasks, work)
        merges_per_minute(team, args.branches, work)
        sandbox_cost(work)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
