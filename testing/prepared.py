"""Prepared work for tests: a project with a failing test, the deterministic worker configured on the anchor.

``calc.py`` subtracts where it should add and ``check_calc.py`` (plain asserts, no test framework: the worker's
environment holds only what the anchor passes) fails until the fix lands. The worker is
``testing/fix_worker.py``, run by path with this interpreter, as an anchor runs any configured worker.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from testing import fixtures
from testing.anchor import AnchoredTeam, Ticker, dated_now
from testing.machines import Machine

WORKER = Path(__file__).resolve().parent / "fix_worker.py"
TEST = "python3 check_calc.py"
FIX = "replace: calc.py: a - b => a + b"
BUGGY = "def add(a, b):\n    return a - b\n"
CHECK = "from calc import add\n\nassert add(2, 3) == 5, 'add is wrong'\nprint('ok')\n"


# What the sandbox must show the worker beside the system: this interpreter (a venv over an installed Python)
# and the folder holding the worker script.
READ = tuple(sorted({sys.prefix, str(Path(sys.base_prefix).resolve()), str(WORKER.parent)}))


def config(**prepared: Any) -> Any:
    """The anchor's config: the deterministic worker as ``fix`` (the default), plus ``prepared`` settings."""
    from gitive.anchor.base.configuration import Config
    from gitive.anchor.prepared.sandbox import Policy
    from gitive.anchor.prepared.settings import Prepared
    from gitive.anchor.prepared.workers import Worker

    settings = {"worker": "fix", "test_commands": ("python3 check_calc.py", "python3 -m pytest"), **prepared}
    return Config(workers={"fix": Worker("fix", (sys.executable, str(WORKER)), (), 60, Policy(READ))},
                  prepared=Prepared(**settings))


def yaml_config(extra: str = "") -> str:
    """The same config as ``anchor.yaml`` text, for a real ``gitive anchor`` process."""
    return (f"workers:\n  fix:\n    command: [{sys.executable!r}, {str(WORKER)!r}]\n    budget: 60\n"
            f"    sandbox:\n      read: {list(READ)!r}\n"
            f"prepared:\n  worker: fix\n  test_commands: ['python3 check_calc.py']\n{extra}")


def buggy_project(machine: Machine) -> str:
    """Commit and push calc.py (wrong) and its check on main; the pushed commit."""
    with dated_now():
        fixtures.commit_file(machine.clone, "calc.py", BUGGY, "calc: add")
        tip = fixtures.commit_file(machine.clone, "check_calc.py", CHECK, "calc: its check")
        machine.git("push", "--quiet", "origin", "main")
    return tip


def hand(machine: Machine, brief: str = f"fix add\n{FIX}", *args: str) -> dict[str, Any]:
    """``gitive hand --to anchor BRIEF --test TEST --json`` on ``machine``; the task written."""
    result = machine.run("hand", "--to", "anchor", brief, "--test", TEST, *args, "--json")
    assert result.code == 0, str(result)
    return result.json()["task"]


def ticker(team: AnchoredTeam, **prepared: Any) -> Ticker:
    """The anchor's tick in this process with prepared work done inside the tick (as ``--once``)."""
    tick = Ticker(team.anchor, config(**prepared))
    tick.anchor.inline = True
    return tick


def prepared_records(machine: Machine) -> list[dict[str, Any]]:
    """The ``prepared`` records in ``machine``'s ledger log, oldest first, read from git."""
    from gitive.store import logs, refs

    return [e.body["record"] for e in logs.entries(machine.repo, refs.log_ref(machine.id, "ledger"))
            if e.kind == "prepared"]


def remote_tip(team: AnchoredTeam, ref: str) -> str | None:
    return fixtures.ref_tips(team.remote, ref).get(ref)
