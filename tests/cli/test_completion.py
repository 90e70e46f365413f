"""Shell completion is Typer's own, turned on: the installed ``gitive`` completes commands and subcommands,
including those of modules a command line loads lazily, and prints the script a shell installs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

GITIVE = Path(sys.executable).with_name("gitive")


def _complete(words: str, tmp_path: Path) -> list[str]:
    env = {**os.environ, "_GITIVE_COMPLETE": "complete_bash", "COMP_WORDS": words,
           "COMP_CWORD": str(len(words.split()) - 1), "GITIVE_HOME": str(tmp_path / "home")}
    done = subprocess.run([str(GITIVE)], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


@pytest.mark.parametrize(("words", "expected"), [
    ("gitive les", {"lessons"}), ("gitive lessons se", {"search"}), ("gitive review pre", {"prepared"}),
    ("gitive anc", {"anchor"}), ("gitive gate l", {"live"}),
])
def test_the_shell_completes_commands_and_subcommands(words: str, expected: set[str], tmp_path: Path) -> None:
    assert set(_complete(words, tmp_path)) == expected


def test_the_completion_script_is_printed_for_a_shell(tmp_path: Path) -> None:
    done = subprocess.run([str(GITIVE), "--show-completion", "bash"], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path, env={**os.environ, "GITIVE_HOME": str(tmp_path / "home")})
    assert done.returncode == 0 and "complete -o default -F _gitive_completion gitive" in done.stdout
