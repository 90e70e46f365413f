"""The machine key file: created private, refused when readable by others or malformed."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from nacl.signing import SigningKey

from gitive.core import keys
from gitive.errors import KeyFileError


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_load_or_create_key_creates_a_private_key_in_gitive_home(gitive_home: Path) -> None:
    key, created = keys.load_or_create_key()
    path = gitive_home / keys.KEY_FILE
    assert created
    assert keys.key_path() == path
    assert _mode(path) == 0o600
    assert _mode(gitive_home) == 0o700
    assert path.read_text() == key.encode().hex() + "\n"
    assert [p.name for p in gitive_home.iterdir()] == [keys.KEY_FILE]  # no temp file left behind


def test_load_or_create_key_returns_the_existing_key() -> None:
    first, _ = keys.load_or_create_key()
    again, created = keys.load_or_create_key()
    assert not created
    assert again.encode() == first.encode()
    assert keys.load_key().encode() == first.encode()


def test_machine_id_is_the_public_key_hex() -> None:
    key = SigningKey(b"\x07" * 32)
    mid = keys.machine_id(key)
    assert mid == key.verify_key.encode().hex()
    assert len(mid) == 64 and mid == mid.lower()


def test_load_key_refuses_a_key_readable_by_others(gitive_home: Path) -> None:
    keys.load_or_create_key()
    path = gitive_home / keys.KEY_FILE
    path.chmod(0o644)
    with pytest.raises(KeyFileError, match=r"chmod 600") as info:
        keys.load_key()
    assert str(path) in str(info.value) and "644" in str(info.value)
    with pytest.raises(KeyFileError, match="chmod"):
        keys.load_or_create_key()


@pytest.mark.parametrize("mode", [0o640, 0o604, 0o660, 0o700 | 0o010])
def test_load_key_refuses_any_group_or_other_bit(gitive_home: Path, mode: int) -> None:
    keys.load_or_create_key()
    (gitive_home / keys.KEY_FILE).chmod(mode)
    with pytest.raises(KeyFileError, match="chmod"):
        keys.load_key()


def test_load_key_missing_says_what_to_run(gitive_home: Path) -> None:
    with pytest.raises(KeyFileError, match="gitive init"):
        keys.load_key()


@pytest.mark.parametrize(
    "text",
    ["", "not a key\n", "ab" * 31 + "\n", "ab" * 33 + "\n", "zz" * 32 + "\n", "ab" * 16 + "\n"],
    ids=["empty", "words", "short", "long", "not-hex", "half"],
)
def test_load_key_refuses_a_malformed_key(tmp_path: Path, text: str) -> None:
    path = tmp_path / "machine.key"
    path.write_text(text)
    path.chmod(0o600)
    with pytest.raises(KeyFileError, match="not a gitive machine key"):
        keys.load_key(path)


def test_load_key_reads_an_explicit_path_and_tolerates_whitespace(tmp_path: Path) -> None:
    seed = bytes(range(32))
    path = tmp_path / "k"
    path.write_text("  " + seed.hex() + "\n\n")
    path.chmod(0o600)
    assert keys.load_key(path).encode() == seed


_CREATE_WHEN_TOLD = """
import os, sys, time
from pathlib import Path
go = Path(sys.argv[1])
while not go.exists():
    time.sleep(0.001)
from gitive.core import keys
key, created = keys.load_or_create_key()
print(keys.machine_id(key))
"""


def test_concurrent_creation_yields_one_key(gitive_home: Path, tmp_path: Path) -> None:
    go = tmp_path / "go"
    procs = [
        subprocess.Popen([sys.executable, "-c", _CREATE_WHEN_TOLD, str(go)], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=os.environ.copy())
        for _ in range(8)
    ]
    time.sleep(0.3)  # let every child import and start polling, so they race on creation
    go.touch()
    outputs = []
    for proc in procs:
        out, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err.decode()
        outputs.append(out.decode().strip())
    assert len(set(outputs)) == 1
    assert keys.machine_id(keys.load_key()) == outputs[0]
    assert sorted(p.name for p in gitive_home.iterdir()) == [keys.KEY_FILE]
    assert _mode(gitive_home / keys.KEY_FILE) == 0o600


def test_verify_accepts_a_good_signature_and_never_raises_on_garbage() -> None:
    key = SigningKey(b"\x01" * 32)
    mid = keys.machine_id(key)
    sig = key.sign(b"message").signature.hex()
    assert keys.verify(mid, b"message", sig)
    assert not keys.verify(mid, b"other", sig)
    assert not keys.verify(keys.machine_id(SigningKey(b"\x02" * 32)), b"message", sig)
    for bad_machine, bad_sig in [(mid, "zz"), (mid, ""), (mid, sig[:-2]), ("nothex", sig), ("ab", sig),
                                 (mid, None), (None, sig)]:
        assert not keys.verify(bad_machine, b"message", bad_sig)  # type: ignore[arg-type]
