"""A team with an anchor (alice, bob, the anchor machine) built once per session and copied for each test."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing import anchor as anchoring


@pytest.fixture(scope="session")
def anchored_template(hermetic_git: Path) -> Iterator[Path]:
    root = Path(tempfile.mkdtemp(prefix="gva-", dir="/tmp"))
    try:
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("GITIVE_HOME", str(root / "unused-home"))
            anchoring.build(root / "team")
        yield root / "team"
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def team(anchored_template: Path) -> Iterator[anchoring.AnchoredTeam]:
    base = Path(tempfile.mkdtemp(prefix="gvt-", dir="/tmp"))
    try:
        yield anchoring.copy(anchored_template, base)
    finally:
        shutil.rmtree(base, ignore_errors=True)
