"""What a person key's passphrase is worth if the file leaks: argon2id at MODERATE (256 MiB), an old key file
re-encrypted at its next unlock, in place and atomically, and the test-only cost refused outside a test home.

These tests run without ``GITIVE_TEST_KDF`` (the rest of the suite keeps keys at the minimum cost), so each
MODERATE derivation here is real: about 0.8 s of one core. They measure it once.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gitive.core import personkey
from gitive.errors import GitiveError

OLD_FILE = Path(__file__).parent / "data" / "person-key-v1-interactive.json"  # written by gitive 2026-11
OLD_PASS = "an old key from gitive 2026-11"
OLD_PUBLIC = "8a41c120f9065527bf5af53ffa4b7849f2edef94458b740452059b3cc67e3732"


@pytest.fixture
def real_cost(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(personkey.TEST_KDF, raising=False)


def _old_key(home: Path) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    path = home / "person.key"
    shutil.copyfile(OLD_FILE, path)
    path.chmod(0o600)
    return path


def _kdf(path: Path) -> tuple[int, int, str]:
    kdf = json.loads(path.read_text())["kdf"]
    return kdf["opslimit"], kdf["memlimit"], kdf["salt"]


def test_an_old_key_file_unlocks_and_is_upgraded_to_moderate_in_place(tmp_path: Path, real_cost: None) -> None:
    path = _old_key(tmp_path / "home")
    assert _kdf(path)[:2] == (2, 64 << 20)  # INTERACTIVE, as gitive wrote it before
    signer = personkey.unlock(personkey.load(path), OLD_PASS)
    assert signer.public == OLD_PUBLIC
    ops, mem, salt = _kdf(path)
    assert (ops, mem) == (personkey.MODERATE.opslimit, personkey.MODERATE.memlimit) and mem >= 256 << 20
    assert salt != _kdf(OLD_FILE)[2]  # a fresh salt with the new cost
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    assert [p.name for p in path.parent.iterdir() if p.name.endswith(".tmp")] == []
    with pytest.raises(personkey.WrongPassphrase):
        personkey.unlock(personkey.load(path), "not the passphrase")

    # Unlocking at the new cost, measured once: CPU time is what a quiet machine's wall time would be.
    wall, cpu = time.perf_counter(), time.process_time()
    again = personkey.unlock(personkey.load(path), OLD_PASS)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"\nperson key unlock at MODERATE: {cpu:.2f} s CPU, {wall:.2f} s wall (load {os.getloadavg()[0]:.1f})")
    assert again.public == OLD_PUBLIC and _kdf(path)[2] == salt  # nothing more to upgrade
    assert cpu <= 1.0


def test_a_new_key_gets_moderate_and_a_cheaper_one_is_refused(tmp_path: Path, real_cost: None) -> None:
    with pytest.raises(GitiveError, match="below gitive's least"):
        personkey.create("a long enough passphrase", personkey.INTERACTIVE, tmp_path / "a" / "person.key")
    assert not (tmp_path / "a" / "person.key").exists()
    made = personkey.create("a long enough passphrase", path=tmp_path / "b" / "person.key")
    assert made.limits == personkey.MODERATE


def test_the_test_cost_is_refused_for_a_key_outside_the_temp_dir(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A real home (here: one under the test's HOME redirected out of the temp dir) never takes the setting."""
    monkeypatch.setenv(personkey.TEST_KDF, "minimum")
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "elsewhere"))  # the temp dir is not where the key is
    path = tmp_path / "home" / "person.key"
    with pytest.raises(GitiveError, match="refused for"):
        personkey.create("a long enough passphrase", personkey.MINIMUM, path)
    assert not path.exists()
    made = _old_key(tmp_path / "h")
    with pytest.raises(GitiveError, match="refused for"):
        personkey.unlock(personkey.load(made), OLD_PASS)
    assert made.read_bytes() == OLD_FILE.read_bytes()


def test_another_value_of_the_test_setting_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(personkey.TEST_KDF, "cheap")
    with pytest.raises(GitiveError, match="refused for"):
        personkey.create("a long enough passphrase", path=tmp_path / "person.key")


def test_a_key_in_a_real_home_with_the_test_setting_fails_through_the_cli() -> None:
    """The product, run as a person would, refuses the setting for a key file outside the temp dir."""
    outside = Path("/var/tmp") if not Path("/var/tmp").resolve().is_relative_to(Path("/tmp")) else None
    if outside is None or not os.access(outside, os.W_OK):
        pytest.skip("no writable directory outside the temp dir")
    home = outside / f"gitive-home-{os.getpid()}-{time.monotonic_ns()}"
    try:
        env = {**os.environ, "GITIVE_HOME": str(home), personkey.TEST_KDF: "minimum"}
        done = subprocess.run([str(Path(sys.executable).with_name("gitive")), "person", "init", "--passphrase-stdin"], env=env,
                              input="a long enough passphrase\n", capture_output=True, text=True, timeout=120)
        assert done.returncode == 1 and "GITIVE_TEST_KDF is for test suites" in done.stderr, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and not (home / "person.key").exists()
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_a_passphrase_changed_meanwhile_is_not_undone_by_an_upgrade(tmp_path: Path, real_cost: None) -> None:
    path = _old_key(tmp_path / "home")
    stale = personkey.load(path)  # one process read the old file…
    personkey.change_passphrase(OLD_PASS, "a brand new passphrase", path=path)  # …another changed it
    changed = path.read_bytes()
    personkey.unlock(stale, OLD_PASS)  # the stale reader still opens its copy, and upgrades nothing
    assert path.read_bytes() == changed
    assert personkey.unlock(personkey.load(path), "a brand new passphrase").public == OLD_PUBLIC


UNLOCK = "from gitive.core import personkey; import sys; personkey.unlock(personkey.load(), sys.argv[1])"


def test_an_upgrade_killed_at_any_moment_loses_nothing(tmp_path: Path, real_cost: None) -> None:
    """A real process unlocking (and so upgrading) the old file, killed with SIGKILL at several moments: the
    file always opens with the passphrase and keeps its key; the last run completes the upgrade."""
    home = tmp_path / "home"
    path = _old_key(home)
    env = {k: v for k, v in os.environ.items() if k != personkey.TEST_KDF} | {"GITIVE_HOME": str(home)}
    for delay in (0.05, 0.4, 1.0, 2.0, 3.5, None):
        proc = subprocess.Popen([sys.executable, "-c", UNLOCK, OLD_PASS], env=env)
        if delay is None:
            assert proc.wait(timeout=120) == 0
        else:
            time.sleep(delay)
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        assert json.loads(path.read_text())["public"] == OLD_PUBLIC
        unchanged = dataclasses.replace(personkey.load(path), path=None)  # opened here, never upgraded here
        assert personkey.unlock(unchanged, OLD_PASS).public == OLD_PUBLIC
    assert _kdf(path)[:2] == (personkey.MODERATE.opslimit, personkey.MODERATE.memlimit)
