"""Person keys for tests: cheap to unlock (argon2id's minimum cost, recorded in the key file like any other)
and opened by one known passphrase, so the many tests that decide (review, invite, remove…) stay fast.

A real person's key is created by ``gitive person init`` at argon2id's MODERATE cost; the minimum cost here is
allowed only by ``GITIVE_TEST_KDF=minimum``, which the hermetic test environment sets and gitive honours only
for a ``GITIVE_HOME`` in the temp dir (gitive/core/personkey.py). Nothing reads a passphrase from the environment.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PASSPHRASE = "correct horse battery staple"


def _path(home: Path | str | None) -> Path:
    base = Path(home) if home is not None else Path(os.environ["GITIVE_HOME"])
    return base / "person.key"


def person_key(home: Path | str | None = None) -> Any:
    """The unlocked person key of ``home`` (default ``$GITIVE_HOME``), created at minimum cost if missing."""
    from gitive.core import personkey

    path = _path(home)
    if not path.exists():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        personkey.create(PASSPHRASE, personkey.MINIMUM, path)
    return personkey.unlock(personkey.load(path), PASSPHRASE)


def copy_person_key(src_home: Path | str, dst_home: Path | str) -> None:
    """What ``gitive person export`` then ``import`` do: the same (still encrypted) key in another home."""
    dst = _path(dst_home)
    dst.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    shutil.copyfile(_path(src_home), dst)
    dst.chmod(0o600)


@contextlib.contextmanager
def stdin(text: str) -> Iterator[None]:
    """``sys.stdin`` reads ``text`` (for in-process ``--passphrase-stdin`` runs)."""
    saved = sys.stdin
    sys.stdin = io.StringIO(text)
    try:
        yield
    finally:
        sys.stdin = saved


def run_deciding(argv: list[str], home: Path | str | None = None) -> int:
    """``gitive argv --passphrase-stdin`` in-process, the passphrase on stdin (the key made if missing)."""
    from gitive.cli.main import run

    person_key(home)
    with stdin(PASSPHRASE + "\n"):
        return run([*argv, "--passphrase-stdin"])


FORGERIES = ("real", "none", "stranger", "other record", "other machine")  # how a forger gestures a record


def gestured_as(record: dict[str, Any], how: str, own: Any, team_id: str, author: str, other_machine: str
                ) -> dict[str, Any]:
    """``record`` with the gesture an attacker who holds the machine key can give it, or (``real``) the
    person's own by ``own``: none, a valid key registered for nobody, the person's real signature made for
    another record, or made for another machine's log."""
    from nacl.signing import SigningKey

    from gitive.core import gesture
    from gitive.core.personkey import LocalSigner

    stranger = LocalSigner(SigningKey(b"s" * 32))
    if how == "none":
        return record
    if how == "real":
        return gesture.sign(own, team_id, author, record)
    if how == "stranger":
        return gesture.sign(stranger, team_id, author, record)
    if how == "other machine":
        return gesture.sign(own, team_id, other_machine, record)
    if how == "other record":
        lifted = gesture.sign(own, team_id, author, {**record, "note": "a decision the person did make"})
        return {**record, "gesture": lifted["gesture"]}
    raise ValueError(how)
