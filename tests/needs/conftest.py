"""A team where one of each thing needs alice (``testing.needs``), built once per session and copied per test."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testing import anchor as anchoring
from testing import needs
from tests.ui.conftest import browser, serve  # noqa: F401 - the dashboard's fixtures: a real gitive ui, Chromium


@pytest.fixture(scope="session")
def needs_template(hermetic_git: Path) -> Iterator[tuple[Path, dict[str, Any]]]:
    root = Path(tempfile.mkdtemp(prefix="gvn-", dir="/tmp"))
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("GITIVE_HOME", str(root / "unused-home"))
            ids = needs.build(root / "team")
        yield root / "team", ids
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def needy(needs_template: tuple[Path, dict[str, Any]]) -> Iterator[tuple[anchoring.AnchoredTeam, dict[str, Any]]]:
    """A fresh copy of that team, and the ids of what needs alice, by kind."""
    template, ids = needs_template
    base = Path(tempfile.mkdtemp(prefix="gvt-", dir="/tmp"))
    try:
        yield anchoring.copy(template, base), ids
    finally:
        shutil.rmtree(base, ignore_errors=True)
