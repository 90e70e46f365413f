"""The rig for the real-harness tests: one team per worker put back in place for each test, the scripted
model server, the pinned harness binaries (installed from the npm registry on first use) and the CPU load.

Every session runs under the load generator (2 busy processes per core, started and stopped around the
harness run) unless ``GITIVE_TEST_LOAD=0``; the load a claim held under is in its report line.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.harness import install
from testing.harness.server import ModelServer, serving
from testing.harness.team import Slot, Team


@pytest.fixture(scope="session")
def slot(hermetic_git: Path) -> Iterator[Slot]:
    base = Path(tempfile.mkdtemp(prefix="gh-", dir="/tmp"))  # short: daemon.sock lives under it
    try:
        yield Slot(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture
def team(slot: Slot) -> Team:
    """alice and bob with their lessons, exactly as built (nothing a previous test did is left)."""
    return slot.fresh()


@pytest.fixture
def model() -> Iterator[ModelServer]:
    with serving() as server:
        yield server


def _binary(name: str) -> Path:
    try:
        return install.ensure(name)
    except install.Missing as exc:  # a failure, not a skip: these tests are part of `make test`
        pytest.fail(f"cannot run the real {name}: {exc}")


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    return _binary("claude")


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    return _binary("codex")


@pytest.fixture(scope="session")
def gemini_bin() -> Path:
    return _binary("gemini")
