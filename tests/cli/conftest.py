"""Fixtures for CLI tests: simulated machines (a clone and a ``GITIVE_HOME`` each) around real remotes."""

from __future__ import annotations

from pathlib import Path

import pytest

from testing.machines import Fleet


@pytest.fixture
def fleet(tmp_path: Path) -> Fleet:
    """Make machines with ``fleet.machine(name, remote)``; found, invite and join through the CLI."""
    return Fleet(tmp_path / "fleet")
