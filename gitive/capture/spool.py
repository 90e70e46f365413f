"""Prepared answers: what the daemon readied for each session's next hook call, handed over as files
(stdlib only: both sides of the hand-over use it, and one side is a hook).

The daemon does the slow work (screening mail, ranking lessons, reading the index) beside the session, and
leaves each item a hook should carry as one file in the session's spool::

    $GITIVE_HOME/spool/<harness>-<digest>/ready/<due ms>-<kind>-<digest>.json   handed over by the daemon
                                          taken/<name>.<pid>.<start>            claimed by a hook (rename)
                                          done/<name>                           in a reply that was written
    $GITIVE_HOME/spool/repos/<digest>/card.json, files/<xx>.json               the card and file matches
    $GITIVE_HOME/spool/alive                                                   the daemon's heartbeat

A hook claims an item by renaming it into ``taken/`` under its own pid and start time (only one of two hooks
racing for it can), writes its reply, and acknowledges by renaming it into ``done/``; the daemon reads
``done/`` and marks the items delivered. A claim whose process has died (the harness killed the hook at its
timeout, or it crashed) goes back to ``ready/`` at the next look, by the next hook of the session or the
daemon, whichever comes first: nothing waits for a timer. So a hook at its slowest does a few renames and
reads of small files, whatever state the daemon is in (stopped, busy, gone).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path

from gitive.core.home import gitive_home

# typing costs each hook process about 5 ms to import; with postponed annotations it is needed only by checkers
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

try:  # hashlib would also load OpenSSL's _hashlib, a few ms more for every hook call
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b

SPOOL = "spool"
ALIVE = "alive"
HEARTBEAT_S = 0.5  # the daemon rewrites its heartbeat this often
STALE_S = 2.0  # a heartbeat older than this: the daemon is gone or stopped, and hooks work alone
TAKEN_MAX_S = 10.0  # a claim older than this goes back even if its process lives (past any harness's timeout)
BUCKETS = 256  # file-match shards per repository (by a byte of the path's digest)


def _digest(text: str, size: int = 12) -> str:
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=size).hexdigest()


def root() -> Path:
    return gitive_home() / SPOOL


def session_dir(harness: str, session: str) -> Path:
    """One folder per session, named as its state file is (``gitive.capture.sessions``)."""
    key = harness + "\0" + session
    return root() / f"{harness}-{_digest(key)}"


def repo_dir(toplevel: str | os.PathLike[str]) -> Path:
    return root() / "repos" / _digest(str(toplevel))


def item_name(item: dict[str, Any]) -> str:
    """Items sort by when they became due, so the oldest goes first (bounded lateness)."""
    due, seq = int(item.get("due") or 0), int(item.get("seq") or 0)
    return f"{due:013d}-{seq:04d}-{str(item.get('kind') or 'x')[:1]}-{_digest(str(item['id']), 8)}.json"


# --- the daemon's heartbeat ---------------------------------------------------------------------------------


def beat(pid: int | None = None) -> None:
    """Say the daemon is alive and preparing (written atomically, read by hooks through its mtime)."""
    folder = root()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = folder / f".{ALIVE}.{os.getpid()}"
    tmp.write_text(json.dumps({"pid": pid or os.getpid(), "at": time.time_ns() // 1_000_000}))
    os.replace(tmp, folder / ALIVE)


def stop_beating() -> None:
    (root() / ALIVE).unlink(missing_ok=True)


def daemon_alive() -> bool:
    """True while a daemon's heartbeat is fresh: then it has prepared this machine's cards and file matches
    and answers ``prepare`` requests; otherwise a hook computes its answer itself."""
    try:
        return time.time() - (root() / ALIVE).stat().st_mtime < STALE_S
    except OSError:
        return False


# --- items: written by the daemon ---------------------------------------------------------------------------


def _folders(sdir: Path) -> tuple[Path, Path, Path]:
    return sdir / "ready", sdir / "taken", sdir / "done"


def names(sdir: Path) -> set[str]:
    """Every item name in the session's spool, wherever it is (claims without their suffix)."""
    found: set[str] = set()
    for folder in _folders(sdir):
        try:
            found.update(_base(n) for n in os.listdir(folder) if n.endswith(".json") or ".json." in n)
        except FileNotFoundError:
            continue
    return found


def _base(name: str) -> str:
    return name[: name.index(".json") + 5] if ".json" in name else name


def put(sdir: Path, item: dict[str, Any]) -> bool:
    """Hand ``item`` (``id``, ``kind``, ``frame``, ``due``) to the session's next hook; false if it is there."""
    name = item_name(item)
    if name in names(sdir):
        return False
    ready = sdir / "ready"
    for folder in _folders(sdir):
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = sdir / f".{name}.{os.getpid()}.tmp"
    tmp.write_text(json.dumps(item, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, ready / name)
    return True


def withdraw(sdir: Path, name: str) -> bool:
    """Take an item back that no hook has claimed (it no longer applies); false if a hook has it."""
    try:
        os.unlink(sdir / "ready" / name)
        return True
    except FileNotFoundError:
        return False


def collect_done(sdir: Path) -> list[tuple[Path, dict[str, Any]]]:
    """The items hooks delivered since the last look, with their files: the caller books each, then removes
    its file (so a daemon that dies in between books it again, rather than never)."""
    done = sdir / "done"
    out = []
    try:
        listed = sorted(os.listdir(done))
    except FileNotFoundError:
        return []
    for name in listed:
        item = _read(done / name)
        if item is None:
            (done / name).unlink(missing_ok=True)
            continue
        out.append((done / name, item))
    return out


def spooled(sdir: Path) -> list[dict[str, Any]]:
    """The items waiting or claimed (not yet delivered), for the daemon's books."""
    ready, taken, _ = _folders(sdir)
    out = []
    for folder in (ready, taken):
        try:
            out += [i for i in (_read(folder / n) for n in os.listdir(folder)) if i is not None]
        except FileNotFoundError:
            continue
    return out


# --- items: taken by a hook ---------------------------------------------------------------------------------


def _read(path: Path) -> dict[str, Any] | None:
    try:
        item = json.loads(path.read_bytes().decode("utf-8", "replace"))
    except (OSError, ValueError):
        return None
    if not (isinstance(item, dict) and isinstance(item.get("id"), str) and isinstance(item.get("frame"), str)):
        return None
    return item


def ready(sdir: Path) -> list[tuple[str, dict[str, Any]]]:
    """The items waiting for this session, oldest first (an unreadable one is skipped)."""
    folder = sdir / "ready"
    try:
        listed = sorted(n for n in os.listdir(folder) if n.endswith(".json"))
    except FileNotFoundError:
        return []
    return [(n, item) for n in listed if (item := _read(folder / n)) is not None]


def proc_start(pid: int) -> int | None:
    """The start time of process ``pid`` in clock ticks since boot (None: no such process, or no /proc)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
        return int(stat[stat.rindex(b")") + 2:].split()[19])
    except (OSError, ValueError, IndexError):
        return None


_ME: str | None = None


def _me() -> str:
    global _ME
    if _ME is None:
        _ME = f"{os.getpid()}.{proc_start(os.getpid()) or 0}"
    return _ME


def claim(sdir: Path, name: str) -> Path | None:
    """Take ``name`` for this process (None: another hook took it first, or the daemon withdrew it)."""
    taken = sdir / "taken" / f"{name}.{_me()}"
    try:
        os.rename(sdir / "ready" / name, taken)
    except FileNotFoundError:
        return None
    except OSError:  # no taken/ folder (an older spool): the item stays for the daemon to repair
        return None
    return taken


def ack(sdir: Path, claimed: Path) -> bool:
    """The reply carrying the item was written: hand it to the daemon as delivered."""
    try:
        os.rename(claimed, sdir / "done" / _base(claimed.name))
        return True
    except OSError:
        return False


def release(sdir: Path, claimed: Path) -> None:
    """The reply was not written: the item waits again for the next call."""
    with contextlib.suppress(OSError):
        os.rename(claimed, sdir / "ready" / _base(claimed.name))


def _claimer_gone(suffix: str, age_s: float) -> int | None:
    """The pid of a claim's process when it is gone (or the claim is older than any harness waits), else None."""
    pid_text, _, start_text = suffix.partition(".")
    try:
        pid, start = int(pid_text), int(start_text)
    except ValueError:
        return 0
    if age_s > TAKEN_MAX_S:
        return pid
    now_start = proc_start(pid)
    if now_start is None:
        if os.path.exists("/proc/self/stat"):
            return pid  # no such process
        try:  # no /proc (macOS): a pid that answers signal 0 is taken for alive until TAKEN_MAX_S
            os.kill(pid, 0)
            return None
        except ProcessLookupError:
            return pid
        except OSError:
            return None
    return pid if start and now_start != start else None


def reclaim(sdir: Path) -> list[tuple[str, int]]:
    """Put back what hooks that died had claimed; returns (item name, pid) for each, for the record."""
    folder = sdir / "taken"
    try:
        listed = os.listdir(folder)
    except FileNotFoundError:
        return []
    back = []
    now = time.time()
    for entry in listed:
        base = _base(entry)
        try:
            age = now - (folder / entry).stat().st_mtime
        except FileNotFoundError:
            continue
        pid = _claimer_gone(entry[len(base) + 1:], age)
        if pid is None:
            continue
        try:
            os.rename(folder / entry, sdir / "ready" / base)
        except OSError:
            continue
        back.append((base, pid))
    return back


# --- prepared per repository: the card and the file matches --------------------------------------------------


def write_json(path: Path, value: Any, *, if_changed: bool = False) -> None:
    """Write ``value`` to ``path`` atomically (a temp file renamed over it). ``if_changed``: leave a file that
    already holds exactly these bytes alone (most of a repository's 256 file-match shards stay the same when
    one lesson changes; reading one is far cheaper than writing and renaming it)."""
    text = json.dumps(value, ensure_ascii=False)
    if if_changed:
        try:
            if path.read_text(encoding="utf-8") == text:
                return
        except (OSError, UnicodeDecodeError):
            pass
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_bytes().decode("utf-8", "replace"))
    except (OSError, ValueError):
        return None


def bucket_of(path: str) -> str:
    return _digest(path, 1)


def card(toplevel: str | os.PathLike[str]) -> dict[str, Any] | None:
    found = read_json(repo_dir(toplevel) / "card.json")
    return found if isinstance(found, dict) and isinstance(found.get("lessons"), list) else None


def files_complete(toplevel: str | os.PathLike[str]) -> bool:
    """Whether the prepared file matches cover every cited file (a file missing from them cites nothing)."""
    meta = read_json(repo_dir(toplevel) / "files" / "meta.json")
    return isinstance(meta, dict) and meta.get("complete") is True


def file_matches(toplevel: str | os.PathLike[str], paths: list[str]) -> dict[str, list[dict[str, Any]]] | None:
    """The prepared lessons for each of ``paths`` (repository-relative); None when nothing was prepared for
    this repository (then the hook asks the index itself)."""
    folder = repo_dir(toplevel) / "files"
    if not folder.is_dir():
        return None
    out: dict[str, list[dict[str, Any]]] = {}
    for path in paths:
        bucket = read_json(folder / f"{bucket_of(path)}.json")
        hits = bucket.get(path) if isinstance(bucket, dict) else None
        if isinstance(hits, list):
            out[path] = [h for h in hits if isinstance(h, dict) and isinstance(h.get("id"), str)]
    return out
