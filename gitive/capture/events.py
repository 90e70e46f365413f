"""The local event log: normalized JSONL under ``$GITIVE_HOME/events/`` (stdlib only: hooks write it).

Full content stays on this machine; :func:`metadata_only` is the projection any shared feature may use.
Each event is one ``write`` of a whole line to a file opened ``O_APPEND``, which the kernel never interleaves
with another appender's, so appending takes no lock and a stopped process cannot hold one against a hook.
The log rotates at ``ROTATE_BYTES`` and keeps at most ``KEEP_BYTES`` in all, oldest files dropped first;
rotating takes a lock without waiting, and whoever does not get it leaves the rotation to its holder.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from gitive.capture.redact import redact
from gitive.core.home import gitive_home

# typing costs each hook process about 5 ms to import; with postponed annotations it is needed only by checkers
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

try:  # hashlib would also load OpenSSL's _hashlib, a few ms more for every hook call
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - an interpreter built without it
    from hashlib import blake2b

CURRENT = "events.jsonl"
ROTATE_BYTES = 8 * 1024 * 1024
KEEP_BYTES = 64 * 1024 * 1024
MAX_FIELD = 16_000  # characters kept of any one string (prompts, outputs)
MAX_LINE = 256 * 1024
CONTENT_KEYS = ("prompt", "output", "diff", "content", "message_text")  # dropped by metadata_only


def events_dir() -> Path:
    return gitive_home() / "events"


def now_iso(ms: int | None = None) -> str:
    stamp = ms if ms is not None else time.time_ns() // 1_000_000
    return datetime.fromtimestamp(stamp / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _cap(value: Any) -> Any:
    if isinstance(value, str) and len(value) > MAX_FIELD:
        return value[:MAX_FIELD] + f"…[{len(value) - MAX_FIELD} more characters cut]"
    if isinstance(value, dict):
        return {k: _cap(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_cap(v) for v in value[:500]]
    return value


def _cap_hard(value: Any) -> Any:
    if isinstance(value, str):
        return value[:500]
    if isinstance(value, dict):
        return {k: _cap_hard(v) for k, v in list(value.items())[:64]}
    if isinstance(value, list):
        return [_cap_hard(v) for v in value[:32]]
    return value


def event_id(event: dict[str, Any]) -> str:
    """Deterministic id: a tool call is identified by session, action, target and call id, so two reports
    of one call (hook and transcript) get one id; anything else by its whole content."""
    call = (event.get("tool") or {}).get("call_id")
    if call:
        target = (event.get("file") or {}).get("paths") or (event.get("command") or {}).get("command") or ""
        basis = json.dumps(["call", (event.get("session") or {}).get("id"), event["event"]["action"].lower(),
                            target, call], sort_keys=True)
    else:
        clean = {k: v for k, v in event.items() if k != "event"}
        basis = json.dumps(["content", event["event"]["action"], clean], sort_keys=True, default=str)
    return blake2b(basis.encode(), digest_size=16).hexdigest()


def make(action: str, *, harness: str | None = None, session: str | None = None, cwd: str | None = None,
         ts: int | None = None, **fields: Any) -> dict[str, Any]:
    """A normalized event: ``event.action``, ``session.id``, ``harness.name`` and any other field groups."""
    stamp = ts if ts is not None else time.time_ns() // 1_000_000
    event: dict[str, Any] = {"timestamp": now_iso(stamp), "ts": stamp, "event": {"action": action}}
    if harness:
        event["harness"] = {"name": harness}
    if session or cwd:
        event["session"] = {k: v for k, v in (("id", session), ("working_directory", cwd)) if v}
    for key, value in fields.items():
        if value not in (None, {}, []):
            event[key] = value
    return event


def _rotate(directory: Path, current: Path) -> None:
    try:
        if current.stat().st_size < ROTATE_BYTES:
            return
    except FileNotFoundError:  # rotated a moment ago; the next append creates it
        return
    current.rename(directory / f"events-{time.time_ns()}.jsonl")
    rotated = sorted(directory.glob("events-*.jsonl"))
    total = sum(p.stat().st_size for p in rotated)
    for old in rotated:
        if total <= KEEP_BYTES - ROTATE_BYTES:
            break
        total -= old.stat().st_size
        old.unlink()


def append(event: dict[str, Any]) -> dict[str, Any]:
    """Redact, cap, id and append one event; return what was written."""
    clean = _cap(redact(event))
    clean["event"]["id"] = event_id(clean)
    line = json.dumps(clean, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    if len(line) > MAX_LINE:
        for key in CONTENT_KEYS:
            clean.pop(key, None)
        clean["truncated"] = True
        line = json.dumps(clean, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    if len(line) > MAX_LINE:  # bulk under another key: cut every string and list hard
        clean = _cap_hard(clean)
        line = json.dumps(clean, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    directory = events_dir()
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    current = directory / CURRENT
    # a lone surrogate (valid in JSON input) becomes its JSON escape again, so the line stays UTF-8
    data = (line + "\n").encode("utf-8", "backslashreplace")
    fd = os.open(current, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        written = os.write(fd, data)  # one write: whole, or (disk full) short and then skipped by readers
        size = os.fstat(fd).st_size
    finally:
        os.close(fd)
    if written == len(data) and size >= ROTATE_BYTES:
        _rotate_if_free(directory)
    return clean


def _rotate_if_free(directory: Path) -> None:
    """Rotate unless another process is rotating (or stopped while rotating): never wait for it."""
    with open(directory / ".lock", "a") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return
        try:
            _rotate(directory, directory / CURRENT)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def read(*, since_ms: int = 0, session: str | None = None, actions: tuple[str, ...] | None = None
         ) -> Iterator[dict[str, Any]]:
    """Events in file order (rotated files first), filtered.

    A line that is not a whole event (torn by a crash, written by something else, holding text that is not
    Unicode, such as a lone surrogate an older hook let through, or a field of the wrong shape) is skipped
    with one warning on stderr (once per line and process): one bad line must never stop a reader.
    """
    directory = events_dir()
    files = [p for p in sorted(directory.glob("events-*.jsonl")) if _rotated_at_ms(p) >= since_ms]
    for path in [*files, directory / CURRENT]:
        if not path.exists():
            continue
        with open(path, "rb") as fh:
            offset = 0
            for raw in fh:
                at, offset = offset, offset + len(raw)
                event = _parse(raw)
                if event is None:
                    _warn_once(path, at, raw)
                    continue
                if event["ts"] < since_ms:
                    continue
                if session and (event.get("session") or {}).get("id") != session:
                    continue
                if actions and event["event"].get("action") not in actions:
                    continue
                yield event


GROUPS = ("event", "session", "harness", "file", "command", "tool", "vcs", "lesson", "output", "prompt", "turn",
          "message", "delivery")  # field groups readers open with ``.get(...)``: each must be an object
_warned: set[tuple[str, int]] = set()


def _parse(raw: bytes) -> dict[str, Any] | None:
    """The event on one line, or None when the line is not one a reader can use safely."""
    try:
        event = json.loads(raw.decode("utf-8", "replace"))
    except ValueError:
        return None
    if not isinstance(event, dict) or not isinstance(event.get("event"), dict):
        return None
    if not isinstance(event.get("ts", 0), int) or isinstance(event.get("ts"), bool):
        return None
    if any(not isinstance(event[k], dict) for k in GROUPS if k in event and event[k] is not None):
        return None
    if b"\\u" in raw and not _unicode(event):  # escapes can spell a lone surrogate
        return None
    event.setdefault("ts", 0)
    return event


def _unicode(value: Any) -> bool:
    try:
        json.dumps(value, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _warn_once(path: Path, at: int, raw: bytes) -> None:
    if raw.strip() == b"" or (str(path), at) in _warned:
        return
    _warned.add((str(path), at))
    import sys

    print(f"gitive: skipped an unreadable line in the event log ({path}, byte {at}): "
          f"{raw[:80].decode('utf-8', 'replace').strip()!r}", file=sys.stderr)


def _rotated_at_ms(path: Path) -> int:
    """When a rotated file was closed (its name): it holds nothing newer, so older ones can be skipped."""
    try:
        return int(path.stem.removeprefix("events-")) // 1_000_000
    except ValueError:
        return 1 << 62  # a file we did not name: read it


def metadata_only(event: dict[str, Any]) -> dict[str, Any]:
    """What may leave this machine: actions, paths, commands, ids; no prompts, outputs or diffs."""
    out = {k: v for k, v in event.items() if k not in CONTENT_KEYS}
    if "tool" in out:
        out["tool"] = {k: v for k, v in out["tool"].items() if k in ("name", "call_id")}
    if "command" in out:
        out["command"] = {k: v for k, v in out["command"].items() if k in ("command", "exit_code")}
    return out
