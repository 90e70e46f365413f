"""Two fetches of one repository at once, while the remote moves: git refuses the slower one's ref update
("cannot lock ref …: is at X but expected Y", no lock file named), and gitive must fetch again rather than
report the remote unreachable (two `gitive sync` at once both succeed)."""

from __future__ import annotations

import multiprocessing
import subprocess
from pathlib import Path

from gitive.store import sync


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def _fetch(path: str) -> str:
    import pygit2

    try:
        sync.fetch(pygit2.Repository(path), "origin", timeout=60)
    except Exception as exc:  # reported to the parent, which asserts there was none
        return f"{type(exc).__name__}: {exc}"
    return ""


def test_two_fetches_at_once_while_the_remote_moves_both_succeed(tmp_path: Path) -> None:
    remote, work, clone = tmp_path / "r.git", tmp_path / "w", tmp_path / "c"
    _git(tmp_path, "init", "-q", "--bare", str(remote))
    _git(tmp_path, "init", "-q", str(work))
    _git(tmp_path, "init", "-q", str(clone))
    _git(clone, "remote", "add", "origin", str(remote))
    _git(clone, "config", "remote.origin.fetch", sync.fetch_refspec("origin"))
    failures = []
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(2) as pool:
        for i in range(25):
            _git(work, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", f"c{i}")
            for name in ("a", "b", "c"):
                _git(work, "push", "-q", "--force", str(remote), f"HEAD:refs/hive/logs/m/{name}")
            failures += [f for f in pool.map(_fetch, [str(clone), str(clone)]) if f]
    assert failures == []
    _git(clone, "rev-parse", "refs/hive-remotes/origin/logs/m/a")
