"""``gitive status`` in alice's clone after ``gitive install``, as a user runs it: per harness, what still stops
the hooks from running (Codex's ``/hooks`` review, Gemini's trusted folder), and the self-test that calls the
installed SessionStart hook with a synthetic payload and says whether the card was carried, and how fast."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from gitive.install import gemini as gemini_install
from testing.harness.team import Team, gitive, install


@pytest.fixture(autouse=True)
def on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """``gitive-hook`` on PATH, as in the shell of a user who installed gitive (the harness inherits it)."""
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")


def status(team: Team) -> dict:
    return json.loads(gitive(team.alice, "status", "--json").stdout)


def test_status_self_test_calls_the_installed_hook_and_sees_the_card(team: Team) -> None:
    install(team.alice, "claude")
    found = status(team)
    test = found["self_test"]["claude"]
    assert test["carried"] is True, test
    assert "gitive-hook claude session-start" in test["command"]
    assert isinstance(test["ms"], int) and 0 < test["ms"] < 10_000
    assert "codex" not in found["self_test"]  # not installed: nothing to call
    shown = gitive(team.alice, "status").stdout
    assert "self-test   claude SessionStart hook carried the card in" in shown


def test_status_self_test_says_when_no_card_was_carried(team: Team) -> None:
    install(team.alice, "claude")
    index = Path(status(team)["index"]["path"])
    index.rename(index.with_suffix(".away"))  # the hook finds no index: it answers, without a card
    test = status(team)["self_test"]["claude"]
    assert test["carried"] is False and "no card" in test["problem"], test


def test_status_says_what_gemini_needs_until_the_folder_is_trusted(team: Team, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    install(team.alice, "gemini")
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path))
    monkeypatch.delenv("GEMINI_CLI_TRUST_WORKSPACE", raising=False)
    warning = status(team)["harnesses"]["gemini"]["hooks"]["warning"]
    assert warning.startswith(gemini_install.TRUST_STEP) and "not in Gemini's trustedFolders.json" in warning
    (tmp_path / ".gemini").mkdir()
    (tmp_path / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(team.alice.clone.parent):
                                                                          "TRUST_FOLDER"}))
    assert status(team)["harnesses"]["gemini"]["hooks"]["warning"] is None  # a folder above it is trusted
    (tmp_path / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(team.alice.clone): "DO_NOT_TRUST"}))
    assert status(team)["harnesses"]["gemini"]["hooks"]["warning"] is not None
