"""Fixtures for dashboard tests: a team of three machines and an anchor around a bare remote, with lessons in
every state worth showing, live sessions (two of them editing one file), a citation, sync history,
obligations in every section (fired late, past its deadline, lapsing, open, unverifiable) and the gate's
ledger (alice live, bob and carol in shadow); `gitive ui` as a real process on a copy of it; and a real
headless Chromium driven through Selenium.

The team is built once per session through the real CLI and hooks (about ten seconds), and each test gets
a fresh copy (``testing.live.copy_team``), so a test that changes the team changes only its own copy.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from testing import anchor as anchoring
from testing import fixtures, live
from testing import ui as ui_testing
from testing.lessons import confirmed, propose
from testing.machines import Fleet, Machine

NAMES = ["a", "b", "c", "anchor"]
DAY = 86_400_000
APP = "src/app.py"
LESSONS = {
    "verified": "Run make gen after editing api.proto or the client drifts",
    "proposed": "The payments test flakes when the clock crosses midnight UTC",
    "carol": "Prefer the staging database for load tests, never production",
}
OWED = {  # what each obligation's action says; the keys name the section the dashboard puts it in
    "fired": "remove the grace period",
    "late": "send the release notes",
    "lapsing": "rotate the staging token",
    "open": "update the runbook",
    "unknown": "tell bob the tests pass",
}


def _date(ms: int) -> str:
    import time

    return time.strftime("%Y-%m-%d", time.gmtime(ms / 1000))


def _obligations(a: Machine, b: Machine, c: Machine, box: Machine) -> dict[str, str]:
    """One obligation per section; the anchor's run fires the merged one (late: it ran after the merge), the
    past deadline and the lapsing expiry, and the gate decides the three items (alice is live)."""
    from gitive.core.clock import now_ms

    now = now_ms()
    a.decided("prefs", "set", "--budget", "3")
    a.decided("gate", "live")
    anchoring.push_branch(a, "auth-rotation")
    ids = {"fired": anchoring.owe(b, anchoring.MERGED.format(branch="auth-rotation"), OWED["fired"],
                                  "--to", "alice")["id"],
           "late": anchoring.owe(a, anchoring.MERGED.format(branch="release-2"), OWED["late"], "--deadline",
                                 _date(now - 2 * DAY), env={"GITIVE_NOW_MS": str(now - 2 * DAY - 3_600_000)})["id"],
           "lapsing": anchoring.owe(c, anchoring.MERGED.format(branch="staging"), OWED["lapsing"],
                                    "--expires", "20h")["id"],
           "open": anchoring.owe(c, anchoring.MERGED.format(branch="docs-refresh"), OWED["open"], "--deadline",
                                 _date(now + 3 * DAY), "--file", "docs/runbook.md")["id"],
           # refused at write time now (it can never fire): as an older gitive wrote it, which readers still show
           "unknown": anchoring.owe_unchecked(a, "alice", 'e.event.action == "tool.completed"', OWED["unknown"],
                                              to="bob")["id"]}
    anchoring.merge(a, "auth-rotation")
    box.ok("anchor", "run", "--once")
    return ids


def _build(base: Path) -> dict[str, Any]:
    fleet = Fleet(base)
    remote = fixtures.init_bare(base / live.REMOTE)
    a, b, c = fleet.team(remote, ("alice", "a"), ("bob", "b"), ("carol", "c"))
    box = fleet.machine("anchor", remote)
    box.ok("join", fleet.invite(a, "--anchor"), "--machine", "anchor")
    for m in (a, b, c):
        m.ok("sync")
    box.ok("anchor", "run", "--once")  # its baseline
    fixtures.commit_file(a.clone, "api.proto", 'syntax = "proto3";\n', "add the api schema")
    fixtures.commit_file(a.clone, APP, "print('app')\n", "add the app")
    a.git("push", "--quiet", "origin", "main")
    for m in (b, c):
        m.git("pull", "--quiet", "--ff-only", "origin", "main")
    ids = {"verified": propose(b, LESSONS["verified"], "--tag", "codegen"),
           "proposed": propose(b, LESSONS["proposed"], "--tag", "flaky"),
           "carol": propose(c, LESSONS["carol"], kind="Convention")}
    for m in (b, c, a):
        m.ok("sync")
    confirmed(a, "review", "approve", ids["verified"], "--note", "bit us twice")
    a.append({"type": "citation", "lesson": ids["verified"], "session": "claude:s-a", "success": True,
              "tests_passed": True, "reverted": False})
    for m, session, path in ((a, "s-a", APP), (b, "s-b", APP), (c, "s-c", "api.proto")):
        live.hook(m, "session-start", live.session_start(m, session))
        live.hook(m, "post-tool", live.edit(m, session, path))
    for m in (a, b, c):
        live.publish_and_sync(m)
    obligations = _obligations(a, b, c, box)
    for m in (a, b, c):
        m.ok("sync")
        # The daemon's database names the repositories it served (this template's clones): a copy that kept
        # it would publish into the template. Presence is already in the refs; session names start afresh.
        for db in m.home.glob("daemon.sqlite*"):
            db.unlink()
    return {"lessons": ids, "obligations": obligations}


@pytest.fixture(scope="session")
def team_template(hermetic_git: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    root = Path(tempfile.mkdtemp(prefix="gvu-", dir="/tmp"))
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("GITIVE_HOME", str(root / "unused-home"))
            ids = _build(root / "t")
        yield root / "t", ids
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def team(team_template: tuple[Path, dict[str, Any]]) -> Iterator[ui_testing.Team]:
    """A fresh copy of the team: machines a (alice, founder), b (bob), c (carol), and the lesson ids."""
    template, ids = team_template
    with live.short_fleet() as fleet:
        machines = live.copy_team(template, fleet.base, NAMES)
        yield ui_testing.Team(fleet.base / live.REMOTE, machines, ids["lessons"], ids["obligations"])


@pytest.fixture(scope="session")
def shared(team_template: tuple[Path, dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
           ) -> Iterator[tuple[ui_testing.Team, ui_testing.Server]]:
    """One copy of the team and one `gitive ui` on machine a, for every test that only reads."""
    template, ids = team_template
    with live.short_fleet() as fleet:
        machines = live.copy_team(template, fleet.base, NAMES)
        server = ui_testing.Server.start(machines[0], tmp_path_factory.mktemp("ui") / "ui.log")
        try:
            yield ui_testing.Team(fleet.base / live.REMOTE, machines, ids["lessons"], ids["obligations"]), server
        finally:
            server.stop()


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[[Machine], ui_testing.Server]]:
    """``serve(machine)``: `gitive ui --json` running for ``machine`` (stopped after the test)."""
    started: list[ui_testing.Server] = []

    def start(machine: Machine) -> ui_testing.Server:
        server = ui_testing.Server.start(machine, tmp_path / f"ui-{len(started)}.log")
        started.append(server)
        return server

    try:
        yield start
    finally:
        for server in started:
            server.stop()


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A headless Chromium (Debian's, through its chromedriver), shared by the session's browser tests."""
    with ui_testing.chromium(tmp_path_factory.mktemp("chromium")) as driver:
        yield driver


@pytest.fixture
def artifacts(request: pytest.FixtureRequest) -> Path:
    """Where this test's screenshots go: ``test-artifacts/ui/<test>/`` (ignored by git)."""
    path = Path(__file__).resolve().parents[2] / "test-artifacts" / "ui" / request.node.name
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    return path
