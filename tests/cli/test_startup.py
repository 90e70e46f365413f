"""The import budget of start-up paths, checked in fresh interpreters: ``--version`` and a no-op sync load no
CLI framework, and a read command whose index is fresh loads neither pygit2 nor PyNaCl (nor Rich with
``--json``). Each check runs the real entry point in a child process and lists what it imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from testing.machines import Fleet, Machine

HEAVY = ("pygit2", "nacl", "rich", "typer", "mcp", "pydantic", "yaml", "celpy", "watchfiles")
PROBE = """
import io, json, sys, contextlib
watched = set(json.loads(sys.argv[2]))
sys.argv = ["gitive", *json.loads(sys.argv[1])]
out = io.StringIO()
try:
    with contextlib.redirect_stdout(out):
        from gitive.cli.entry import main
        main()
except SystemExit as exc:
    code = exc.code
heavy = sorted({m.split(".")[0] for m in sys.modules} & watched)
print(json.dumps({"code": code, "heavy": heavy, "out": out.getvalue()}))
"""


def _loaded(argv: list[str], cwd: Path, home: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE, json.dumps(argv), json.dumps(HEAVY)], cwd=cwd,
                          capture_output=True, text=True, env={**os.environ, "GITIVE_HOME": str(home)}, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture
def alice(tmp_path: Path, bare_remote: Path) -> Machine:
    machine = Fleet(tmp_path / "fleet").found(Fleet(tmp_path / "fleet").machine("laptop", bare_remote), "alice")
    machine.ok("team")  # the index is fresh from here on
    return machine


def test_version_imports_no_framework(tmp_path: Path) -> None:
    found = _loaded(["--version"], tmp_path, tmp_path / "home")
    assert found["code"] == 0 and found["out"].startswith("gitive ")
    assert found["heavy"] == []


def test_a_no_op_sync_imports_no_framework(alice: Machine) -> None:
    found = _loaded(["sync", "--json"], alice.clone, alice.home)
    assert found["code"] == 0 and json.loads(found["out"])["ok"]
    assert found["heavy"] == []


def test_a_read_command_on_a_fresh_index_skips_pygit2_and_nacl(alice: Machine) -> None:
    as_json = _loaded(["team", "--json"], alice.clone, alice.home)
    assert as_json["code"] == 0 and json.loads(as_json["out"])["members"][0]["person"] == "alice"
    assert as_json["heavy"] == ["typer"]
    text = _loaded(["team"], alice.clone, alice.home)
    assert text["code"] == 0 and "alice" in text["out"]
    assert text["heavy"] == ["rich", "typer"]


def test_a_read_command_after_new_refs_ingests_them(alice: Machine) -> None:
    alice.append({"type": "team", "name": "a note", "founder": alice.id})
    found = _loaded(["log", "--json"], alice.clone, alice.home)
    assert found["code"] == 0 and "pygit2" in found["heavy"]  # something new: the full ingest ran
    assert any(e["record"].get("name") == "a note" for e in json.loads(found["out"]))


def test_one_command_loads_only_its_own_module(alice: Machine) -> None:
    probe = PROBE.replace('heavy = sorted', 'cli = sorted(m for m in sys.modules if m.startswith("gitive.cli."))\n'
                          'heavy = sorted').replace('"out": out.getvalue()}', '"out": out.getvalue(), "cli": cli}')
    done = subprocess.run([sys.executable, "-c", probe, json.dumps(["team", "--json"]), json.dumps(HEAVY)],
                          cwd=alice.clone, capture_output=True, text=True,
                          env={**os.environ, "GITIVE_HOME": str(alice.home)}, timeout=120)
    loaded = json.loads(done.stdout.strip().splitlines()[-1])["cli"]
    assert "gitive.cli.team" in loaded
    assert not {"gitive.cli.mcp", "gitive.cli.daemon", "gitive.cli.lessons", "gitive.cli.install"} & set(loaded)
