"""Input a peer could write on purpose: every path ends in a refusal, never a crash."""

from __future__ import annotations

import threading

import pytest

from gitive.core import canonical, ids, keys, records
from gitive.errors import InvalidRecord, KeyFileError


def test_a_lone_surrogate_is_refused_not_crashed_on() -> None:
    with pytest.raises(InvalidRecord, match="surrogate"):
        canonical.loads_canonical(b'"\\ud800"')
    with pytest.raises(InvalidRecord, match="surrogate"):
        canonical.dumps("\ud800")


@pytest.mark.parametrize("check", [ids.is_name, ids.is_machine_id])
def test_a_trailing_newline_is_not_part_of_a_valid_name_or_id(check) -> None:
    value = "alice" if check is ids.is_name else "ab" * 32
    assert check(value)
    assert not check(value + "\n")


def test_a_project_scope_must_be_hex() -> None:
    with pytest.raises(InvalidRecord):
        records.check_scope({"project": "x" * 64})
    records.check_scope({"project": "a" * 64})


def test_concurrent_threads_creating_the_key_agree_on_one_key() -> None:
    found: list[str] = []
    errors: list[BaseException] = []

    def create() -> None:
        try:
            key, _ = keys.load_or_create_key()
            found.append(keys.machine_id(key))
        except BaseException as exc:  # pragma: no cover - the failure we test against
            errors.append(exc)

    threads = [threading.Thread(target=create) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(set(found)) == 1


def test_a_binary_key_file_is_refused_cleanly() -> None:
    path = keys.key_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\xff\xfe" * 40)
    path.chmod(0o600)
    with pytest.raises(KeyFileError, match="not a gitive machine key"):
        keys.load_key()
