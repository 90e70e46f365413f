"""Fixtures for the quiet pass: a team clone, and recorded sessions of the four harnesses replayed through the
real ``gitive-hook`` so the event log is exactly what a harness would leave behind."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from testing import fixtures

FIXTURES = Path(__file__).parent / "fixtures"
HOOK = Path(sys.executable).with_name("gitive-hook")
HARNESSES = ("claude", "codex", "cursor", "gemini")


@pytest.fixture
def team_clone(bare_remote: Path, make_clone: Callable[[str | Path, str], Path], monkeypatch: pytest.MonkeyPatch
               ) -> Path:
    """alice's clone with the files the recorded sessions touch, a team founded in it; the cwd."""
    from gitive.cli.main import run

    clone = make_clone(bare_remote, "alice")
    fixtures.commit_file(clone, "src/app/settings.py", 'SETTINGS_PATH = "settings.toml"\n')
    fixtures.commit_file(clone, "tests/test_settings.py", "def test_reload():\n    pass\n")
    fixtures.run_git(["push", "--quiet", "origin", "main"], cwd=clone)
    monkeypatch.chdir(clone)
    assert run(["init", "--person", "alice"]) == 0
    return clone


def replay(harness: str, repo: Path, home: Path, name: str = "failed-fixed") -> list[str]:
    """Feed each recorded payload of ``<harness>-<name>.jsonl`` to ``gitive-hook <harness> <event>``; return
    the hook events fed, in order."""
    env = {"GITIVE_HOME": str(home), "HOME": str(home.parent), "PATH": "/usr/bin:/bin"}
    fed = []
    for line in (FIXTURES / f"{harness}-{name}.jsonl").read_text().splitlines():
        item = json.loads(line.replace("{{REPO}}", str(repo)))
        done = subprocess.run([str(HOOK), harness, item["event"]], input=json.dumps(item["payload"]).encode(),
                              capture_output=True, cwd=repo, env=env, timeout=30)
        assert done.returncode == 0, done.stderr.decode()
        fed.append(item["event"])
    return fed


def all_refs(repo: Path) -> str:
    """Every ref and its target, as git lists them (a shared ref written by anything changes this)."""
    return fixtures.run_git(["for-each-ref", "--format=%(refname) %(objectname)"], cwd=repo)
