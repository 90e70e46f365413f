"""Real Claude Code (``claude -p``), Codex CLI (``codex exec``) and Gemini CLI in alice's clone, her daemon running,
on a team with an anchor: the anchor's notice for alice waits for a breakpoint (a test run) and then reaches the
model at the session's next call, where each harness puts gitive's context (Claude: a system turn; Codex: a
developer item; Gemini: the tool's result, HTML-escaped), once, under load.

While the model "thinks" about the first request, bob merges the branch alice's obligation waits for and the
anchor ticks (in this process, :class:`testing.anchor.Ticker`): the gate delivers an attention item to alice, and
her daemon takes it after a sync. It must not show it yet: alice's session is working, not at a breakpoint. The
model then runs the project's tests (a breakpoint); the daemon queues the notice, and the PostToolUse (Gemini:
AfterTool) hook of the next tool call carries it. The promise (docs/daemon.md, bounded lateness) is that it
reaches the model within two calls of becoming due: the test records which request it came in.
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from testing import anchor as anchoring
from testing import live
from testing.anchor import MERGED, AnchoredTeam, Ticker, merge, owe, push_branch
from testing.harness import claude, codex, gemini
from testing.harness.claims import Claims, first_with, gitive_marks, roles_of
from testing.harness.script import Call, Script, Text
from testing.harness.server import ModelServer
from testing.harness.team import install
from testing.load import cpu_load

PROMPT = "Run the project's tests, then tell me they pass."
FINAL = "The tests pass."
ACTION = "tell bob the billing export is merged and ready for his report"
TESTS = "python3 -m unittest discover -s tests -q"
# harness: (its module, how its model runs a shell command, the role gitive's context lands in)
HARNESSES: dict[str, tuple[Any, Callable[[str, str], Call], str]] = {
    "claude": (claude, lambda cmd, why: Call("Bash", {"command": cmd, "description": why}), "system"),
    "codex": (codex, lambda cmd, why: Call("exec_command", {"cmd": cmd}), "developer"),
    "gemini": (gemini, lambda cmd, why: Call("run_shell_command", {"command": cmd, "description": why}), "tool"),
}
# The notice's frame, as each harness passes it on: Gemini HTML-escapes its brackets inside a JSON tool result.
ANCHOR_FRAME = re.compile(r'(?:<|&lt;)team-notice from=\\?(?:"|&quot;)anchor')
SMOKE = "import unittest\n\n\nclass Smoke(unittest.TestCase):\n    def test_ok(self):\n        self.assertTrue(True)\n"


@pytest.fixture(scope="module")
def anchored_template(hermetic_git: Path) -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="gha-", dir="/tmp"))  # short: daemon.sock lives under it
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("GITIVE_HOME", str(root / "unused-home"))
            anchoring.build(root / "team")
        yield root / "team"
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def anchored(anchored_template: Path) -> Iterator[AnchoredTeam]:
    base = Path(tempfile.mkdtemp(prefix="ght-", dir="/tmp"))
    try:
        yield anchoring.copy(anchored_template, base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _live_session(team: AnchoredTeam, harness: str) -> str | None:
    """The session id alice's daemon counts live for ``harness`` (its SessionStart seen), if any."""
    with contextlib.closing(live.daemon_db(team.alice)) as db:
        try:
            rows = db.execute("SELECT key FROM sessions WHERE key LIKE ?", (f"{harness}:%",)).fetchall()
        except Exception:  # the daemon makes its tables on its first round
            return None
    return rows[0][0].split(":", 1)[1] if rows else None


def _item_state(team: AnchoredTeam, item: str) -> str | None:
    with contextlib.closing(live.daemon_db(team.alice)) as db:
        try:
            row = db.execute("SELECT state FROM anchor_items WHERE item = ?", (item,)).fetchone()
        except Exception:  # the table is made by the daemon's first take
            return None
    return row[0] if row else None


def _notice_spooled(team: AnchoredTeam, harness: str, session: str) -> bool:
    from gitive.capture import spool

    with live.on(team.alice):
        return any('from="anchor"' in str(item.get("frame")) for _, item in
                   spool.ready(spool.session_dir(harness, session)))


@pytest.mark.parametrize("harness", sorted(HARNESSES))
def test_the_anchors_notice_reaches_the_model_at_the_call_after_a_breakpoint(anchored: AnchoredTeam,
                                                                             model: ModelServer,
                                                                             harness: str,
                                                                             request: pytest.FixtureRequest) -> None:
    request.getfixturevalue(f"{harness}_bin")
    module, shell, role = HARNESSES[harness]
    team = anchored
    team.alice.decided("gate", "live")
    push_branch(team.bob, "billing-export", path="billing.py")
    owe(team.alice, MERGED.format(branch="billing-export"), ACTION, "--to", "bob")
    tick = Ticker(team.anchor)
    tick()  # the baseline: nothing merged yet
    (team.alice.clone / "tests").mkdir(exist_ok=True)
    (team.alice.clone / "tests" / "test_smoke.py").write_text(SMOKE)
    install(team.alice, harness)
    home = team.base / f"{harness}-home"
    home.mkdir()
    seen: dict[str, Any] = {}

    def fire() -> None:
        """With alice's session live: bob merges, the anchor decides, alice's daemon takes the item and holds it."""
        seen["session"] = live.wait_for(lambda: _live_session(team, harness), "alice's session live", timeout=90, every=0.5)
        merge(team.bob, "billing-export")
        seen["delivered"] = tick().gate.get("delivered")
        seen["item"] = next(f["item"] for f in anchoring.firing_entries(team.anchor))
        seen["before_breakpoint"] = live.wait_for(lambda: _item_state(team, seen["item"]),
                                                  "alice's daemon to take the item", timeout=120, every=0.5)

    def spooled() -> None:
        """After the test run (a breakpoint): the daemon shows the item and spools the notice."""
        live.wait_for(lambda: _notice_spooled(team, harness, seen["session"]), "the notice in the session's spool",
                      timeout=90, every=0.5)

    model.script = Script([replace(shell(TESTS, "run the tests"), before=fire),
                           replace(shell("git status --short", "check the tree"), before=spooled), Text(FINAL)])
    with live.real_daemon(team.alice, interval=1), cpu_load(per_core=2, seconds=300) as load:
        run = module.session(model, team.alice.clone, home, team.alice.home, PROMPT)
    claims = Claims(run, "load" if load.count else "idle")
    views = run.views()
    claims.check("exits 0 with the script's answer", run.code == 0 and FINAL in run.out, f"exit {run.code}")
    claims.check("the script's own steps raised nothing", not model.script.errors, str(model.script.errors))
    claims.check("the gate delivered one item to alice during the session", seen.get("delivered") == 1,
                 json.dumps(seen, default=str))
    claims.check("alice's daemon held it until a breakpoint", seen.get("before_breakpoint") == "waiting",
                 str(seen.get("before_breakpoint")))
    at = first_with(views, ACTION)
    claims.check("the notice is in no request before the breakpoint's result (requests 0 and 1)",
                 at is None or at >= 2, f"first in {at}")
    claims.check("the notice reaches the model within two calls of the breakpoint", at in (2, 3), f"first in {at}")
    claims.check(f"it arrives as a {role}-role turn, framed as the anchor's",
                 at is not None and roles_of(views[at], ACTION) == [role]
                 and ANCHOR_FRAME.search(views[at].joined()) is not None, str(at is not None and roles_of(views[at], ACTION)))
    carried = [i for i, v in enumerate(views) if ACTION in v.joined()]
    claims.check("it is carried once: every later request holds that same one turn, no second copy",
                 at is not None and all(views[i].joined().count(ACTION) == 1 for i in carried), str(carried))
    item = str(seen.get("item") or "")
    shown = [r for r in team.alice.json("inbox", "--items") if r["item"] == item]
    claims.check("`gitive inbox --items` lists it shown", bool(shown) and shown[0]["state"] == "shown", str(shown))
    # Gemini puts SessionStart's card inside the user's turn by design (docs/hooks.md); the notice never is.
    marks = (lambda text: [ACTION] if ACTION in text else []) if harness == "gemini" else \
        (lambda text: gitive_marks(text, [ACTION]))
    leaks = [m for v in views for s in v.segments if s.role == "user" for m in marks(s.text)]
    claims.check("nothing from gitive in user-role text" if harness != "gemini" else
                 "the notice is in no user-role text", not leaks, json.dumps(leaks[:5]))
    claims.verify()
