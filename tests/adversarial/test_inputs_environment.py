"""Bad input and bad environments get one line, never "internal error" (issue 23, seen item 8).

An agent with a shell feeds gitive arguments of any size, and machines run out of disk or mount ``.git``
read-only. Each answer is one short line and a non-zero exit; reads keep working on a read-only ``.git``;
a full disk says where and that nothing was written. The read-only and full-disk cases use a real read-only
bind mount and a real, small tmpfs (root only: they skip where mounting is not allowed).
"""

from __future__ import annotations

import contextlib
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from testing.lessons import propose
from testing.machines import Fleet, Machine

HUGE = "f" * 100_000
STDERR_MAX = 400  # one line, quoting at most ~80 characters of any argument


@pytest.fixture
def alice(tmp_path: Path, bare_remote: Path) -> tuple[Machine, str]:
    from tests.lessons.conftest import share_file

    (a,) = Fleet(tmp_path / "fleet").team(bare_remote, ("alice", "a"))
    share_file([a])
    lesson = propose(a, "Restart the gateway after a config change")
    a.ok("sync")
    return a, lesson


def _one_line(result: object, code: int, *words: str) -> str:
    err = result.err.strip()  # type: ignore[attr-defined]
    assert result.code == code, result  # type: ignore[attr-defined]
    assert len(err) < STDERR_MAX and "\n" not in err and "internal error" not in err, err[:500]
    for word in words:
        assert word in err, err
    return err


@pytest.mark.parametrize("argv", [
    ("why", HUGE), ("lessons", "show", HUGE), ("lessons", "supersede", HUGE, "--kind", "Gotcha", "--text", "new words",
                                               "-e", "file:api.proto"),
])
def test_a_100_kb_id_is_no_such_id(alice: tuple[Machine, str], argv: tuple[str, ...]) -> None:
    a, _ = alice
    err = _one_line(a.run(*argv), 1, "no ")
    assert "pattern too complex" not in err


def test_a_100_kb_option_value_is_quoted_in_80_characters(alice: tuple[Machine, str]) -> None:
    a, _ = alice
    result = a.run("lessons", "propose", "--kind", "K" * 100_000, "--text", "x", "-e", "file:api.proto")
    assert result.code == 1 and "unknown lesson kind" in result.err
    assert len(result.err) < STDERR_MAX, len(result.err)
    for argv in (("log", "--kind", "K" * 100_000), ("export", "--kind", "K" * 100_000),
                 ("lessons", "list", "--scope", "S" * 100_000)):
        result = a.run(*argv)
        assert len(result.err) + len(result.out) < 1_000, (argv[:2], result.code, result.err[:300])


def test_a_claim_of_a_huge_path_or_session_is_refused_by_the_library(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from gitive.daemon import claims, db
    from gitive.errors import GitiveError

    monkeypatch.setenv("GITIVE_HOME", str(tmp_path / "home"))
    with db.connect() as conn:
        for paths, session in (([HUGE], "alice/s"), (["src/a.py"], "alice/" + HUGE)):
            with pytest.raises(GitiveError) as caught:
                claims.claim(conn, session, paths, 10, "n" * (1 << 20))
            assert len(str(caught.value)) < STDERR_MAX
        assert conn.execute("SELECT count(*) FROM claims").fetchone() == (0,)


def _mount(*args: str) -> None:
    proc = subprocess.run(["mount", *args], capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"cannot mount here ({proc.stderr.strip()[:80]}): needs root")


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    _mount("--bind", str(folder), str(folder))
    try:
        _mount("-o", "remount,ro,bind", str(folder))
        yield
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=True)


def test_reads_work_on_a_read_only_git_and_writes_say_so(alice: tuple[Machine, str]) -> None:
    a, lesson = alice
    with read_only(a.clone / ".git"):
        assert lesson[:12] in a.ok("lessons", "list").out
        assert "gateway" in a.ok("lessons", "search", "gateway", "--proposed").out
        assert a.ok("log").out.strip()
        a.ok("doctor")
        assert a.json("lessons", "show", lesson)["text"] == "Restart the gateway after a config change"
        result = a.run("lessons", "propose", "--kind", "Gotcha", "--text", "never written", "-e", "file:api.proto")
        assert result.code == 1, result
        assert "is read-only; nothing was written" in result.err, result.err
        assert "internal error" not in result.err
    assert "never written" not in a.ok("lessons", "list").out


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    mount = tmp_path / "tiny"
    mount.mkdir()
    _mount("-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mount))
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def _fill(disk: Path) -> Path:
    filler = disk / "filler"
    with open(filler, "wb") as fh, contextlib.suppress(OSError):
        while True:
            fh.write(b"\0" * 65536)
            fh.flush()
    return filler


def test_a_full_disk_says_disk_full_and_writes_nothing(alice: tuple[Machine, str], tiny_disk: Path) -> None:
    a, _ = alice
    moved = tiny_disk / "clone"
    shutil.copytree(a.clone, moved, symlinks=True)
    b = Machine("a-on-tiny", a.home, moved)
    assert b.ok("lessons", "list").out  # works there while the disk has room
    filler = _fill(tiny_disk)
    result = b.run("lessons", "propose", "--kind", "Gotcha", "--text", "written on a full disk",
                   "-e", "file:api.proto")
    assert result.code == 1, result
    assert f"disk full at {tiny_disk}" in result.err and "nothing was written" in result.err, result.err
    assert "internal error" not in result.err and len(result.err) < STDERR_MAX
    filler.unlink()
    assert "written on a full disk" not in b.ok("lessons", "list").out
    b.ok("doctor")
