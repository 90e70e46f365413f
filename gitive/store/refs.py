"""Names of hive refs, compare-and-swap updates, and reading ref tips."""

from __future__ import annotations

import contextlib
import time
from pathlib import Path
from typing import NamedTuple

import pygit2

from gitive.constants import (
    BODIES_REF_PREFIX,
    LOG_REF_PREFIX,
    PINNED_REF_PREFIX,
    PRESENCE_REF_PREFIX,
    REMOTES_REF_PREFIX,
    STALE_LOCK_SECONDS,
)
from gitive.core.ids import RefName, is_machine_id


def log_ref(machine: str, log: str) -> RefName:
    return RefName(f"{LOG_REF_PREFIX}{machine}/{log}")


def bodies_ref(machine: str) -> RefName:
    return RefName(f"{BODIES_REF_PREFIX}{machine}")


def presence_ref(machine: str) -> RefName:
    return RefName(f"{PRESENCE_REF_PREFIX}{machine}")


def pinned_ref(machine: str, log: str) -> RefName:
    return RefName(f"{PINNED_REF_PREFIX}logs/{machine}/{log}")


class LogRef(NamedTuple):
    """A log ref as found in a repository: who owns it, which log, and where it came from."""

    name: str
    source: str  # "local", "pinned", or the remote name
    machine: str
    log: str


def parse_log_ref(name: str) -> LogRef | None:
    """Recognise ``refs/hive/logs/<m>/<log>``, ``refs/hive-remotes/<r>/logs/<m>/<log>`` and pins."""
    if name.startswith(LOG_REF_PREFIX):
        source, rest = "local", name[len(LOG_REF_PREFIX):]
    elif name.startswith(PINNED_REF_PREFIX + "logs/"):
        source, rest = "pinned", name[len(PINNED_REF_PREFIX) + 5:]
    elif name.startswith(REMOTES_REF_PREFIX):
        remote, _, tail = name[len(REMOTES_REF_PREFIX):].partition("/")
        if not tail.startswith("logs/"):
            return None
        source, rest = remote, tail[5:]
    else:
        return None
    machine, _, log = rest.partition("/")
    if not is_machine_id(machine) or not log or "/" in log:
        return None
    return LogRef(name, source, machine, log)


def tips(repo: pygit2.Repository, prefix: str) -> dict[str, str]:
    """Map every ref under ``prefix`` to the hex id it points at (symbolic refs skipped)."""
    out: dict[str, str] = {}
    oid = pygit2.Oid
    for ref in repo.references.iterator():
        name = ref.name
        if name.startswith(prefix):
            # A symbolic ref's target is a name (str), a direct one's an Oid; reading ``ref.type`` instead costs
            # as much as the rest of the loop (650 refs: 8.5 ms against 1.2 ms, pygit2 1.21).
            target = ref.target
            if isinstance(target, oid):
                out[name] = str(target)
    return out


def tip(repo: pygit2.Repository, name: str) -> str | None:
    try:
        return str(repo.references[name].target)
    except (KeyError, pygit2.InvalidSpecError):
        return None


def _clear_stale_lock(repo: pygit2.Repository, name: str) -> bool:
    """Remove ``<ref>.lock`` left by a writer killed mid-update; true if one was removed."""
    lock = Path(repo.path) / f"{name}.lock"
    try:
        age = time.time() - lock.stat().st_mtime
    except FileNotFoundError:
        return False
    if age < STALE_LOCK_SECONDS:
        return False
    lock.unlink(missing_ok=True)
    return True


class _Moved(Exception):
    """The ref no longer holds the value the caller read: abandon the transaction."""




def set_if_equals(repo: pygit2.Repository, name: str, old: str | None, new: str, message: str) -> bool:
    """Point ``name`` at ``new`` only if it still points at ``old`` (None: only if it does not exist).

    The ref is locked first (libgit2 takes ``<ref>.lock`` exclusively), then re-read and compared, so two
    writers can never both win, not even when both create the ref. The update is a rename of the lock file:
    a process killed at any point leaves either the old or the new tip.

    Returns:
        True if the ref was moved; False if another writer got there first (or holds the lock now).
    """
    for _ in range(2):
        try:
            with repo.transaction() as tx:
                tx.lock_ref(name)
                if tip(repo, name) != old:
                    raise _Moved
                tx.set_target(name, new, message=message)
            return True
        except _Moved:
            return False
        except (pygit2.GitError, OSError) as exc:
            if "lock" in str(exc) and _clear_stale_lock(repo, name):
                continue
            if "lock" in str(exc) or "exists" in str(exc):
                return False  # a live writer holds the lock: lost this round
            raise
    return False


def force_set(repo: pygit2.Repository, name: str, new: str, message: str) -> None:
    """Point ``name`` at ``new`` whatever it held (for refs that are rewritten by design)."""
    repo.references.create(name, new, force=True)


def delete(repo: pygit2.Repository, name: str) -> None:
    with contextlib.suppress(KeyError):
        repo.references.delete(name)
