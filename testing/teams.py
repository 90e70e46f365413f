"""Teams founded once per test session and restored for each test, at one fixed place per test process.

Founding a team through the CLI (person keys, invites, joins, syncs) costs seconds per test, more on a busy
machine. A copy elsewhere would not be the same team: the project id is a hash of the remote's path, and the
founding already wrote ``project-member`` records (signed) naming it, while ``teams.json`` and the index name
absolute paths. So every team here is built, and later restored, at the *same* paths: ``live/fleet`` (the
machines' clones and homes) and ``live/remote.git`` (the bare remote). pytest-xdist runs one test at a time
per worker and each worker has its own place, so a restored team is as fresh and private as a new one, with
every path, id and record it would have had if the test had founded it there itself.

What a restore cannot give back is state held in this process; ``reset_process_state`` clears gitive's
per-process memories of teams and machines (the same ids now recur from test to test).
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from testing import fixtures

REMOTE = "remote.git"
FLEET = "fleet"


class Place:
    """The fixed place of one test process: ``live`` (what the running test sees) and saved ``snapshots``."""

    def __init__(self, root: Path) -> None:
        self.live = root / "live"
        self.snapshots = root / "snapshots"
        self.made: dict[str, Any] = {}  # what each kind's ``build`` returned (ids a test looks up)

    def fresh(self) -> Path:
        """Empty ``live`` for a new test; returns it."""
        shutil.rmtree(self.live, ignore_errors=True)
        self.live.mkdir(parents=True)
        reset_process_state()
        return self.live

    def restore(self, kind: str, build: Callable[[Path], Any]) -> Path:
        """``live`` holding the team ``kind``: built by ``build(live)`` the first time, copied back after.

        ``build`` runs with ``GITIVE_HOME`` pointed at a directory no machine uses, as a fixture's would; what it
        returns is kept in ``made[kind]``.
        """
        snapshot = self.snapshots / kind
        if not snapshot.exists():
            live = self.fresh()
            with pytest.MonkeyPatch.context() as mp:
                mp.setenv("GITIVE_HOME", str(self.snapshots / "unused-home"))
                self.made[kind] = build(live)
            shutil.copytree(live, snapshot, symlinks=True)
        shutil.rmtree(self.live, ignore_errors=True)
        shutil.copytree(snapshot, self.live, symlinks=True)  # copy2: mtimes too (the project-id cache checks them)
        reset_process_state()
        return self.live

    def remote(self) -> Path:
        """``live``'s bare remote, created empty when the test has no team there yet."""
        path = self.live / REMOTE
        return path if path.exists() else fixtures.init_bare(path)


def reset_process_state() -> None:
    """Forget what gitive remembers per process about teams and machines (presence snapshots accepted,
    file matches prepared), as a test that founded its own team, with new ids, never met it."""
    presence = sys.modules.get("gitive.store.presence")
    if presence is not None:
        presence._accepted.clear()
    prepare = sys.modules.get("gitive.daemon.prepare")
    if prepare is not None:
        prepare._signatures.clear()
