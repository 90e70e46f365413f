"""Failed → fixed pairs in one session's events: a command failed, files were modified, the same command passed.

That shape is the strongest evidence a lesson can have (the reference's distill guidance, F-15): the failing
run shows the symptom, the edits the change, the passing run that the change fixed it. Each pair carries the
events it was read from and its *failure signature*: the normalized command, the failing test and the error
class, hashed (D-14), so a later session stuck on the same failure can be matched to it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from gitive.learn import errors

_CD = re.compile(r"^\s*cd\s+\S+\s*(?:&&|;)\s*")
_TAIL = re.compile(r"(?:\s*(?:2>&1|\|\s*(?:tail|head|grep|less|cat)\b[^|]*))+\s*$")
_ENV = re.compile(r"^(?:[A-Z_][A-Z0-9_]*=\S+\s+)+")
_FAILED_TEST = re.compile(r"(?:FAILED|FAIL|ERROR)[:\s]+([\w./\-\[\]:]+(?:::[\w\[\]\-.]+)+|[\w./-]+\.(?:py|ts|js|go|rs|rb))")
_ERROR_CLASS = re.compile(r"\b([A-Z][A-Za-z0-9]*(?:Error|Exception|Failure|Failed|Warning))\b")
MAX_BETWEEN_MS = 6 * 3_600_000  # a fix hours after the failure, in the same session, still counts


class Pair(NamedTuple):
    session: str
    harness: str
    repo: str
    command: str  # normalized
    failed: dict[str, Any]  # the last failing run before the edits
    edits: list[dict[str, Any]]  # file-modifying events between it and the pass
    passed: dict[str, Any]  # the first passing run after the edits
    files: list[str]  # the files those edits modified
    signature: str
    test: str
    error_class: str
    error_line: str


def normalize_command(command: str) -> str:
    """The command as a failure signature knows it: no leading ``cd X &&``, no env assignments, no trailing
    pipes into tail/head/grep or ``2>&1``, white space collapsed."""
    text = " ".join(command.split())
    text = _CD.sub("", text)
    text = _ENV.sub("", text)
    return _TAIL.sub("", text).strip()


def _output(event: dict[str, Any]) -> str:
    out = event.get("output") or {}
    return out.get("text", "") if isinstance(out, dict) else ""


def failure_parts(command: str, output: str, exit_code: int | None) -> tuple[str, str, str]:
    """(failing test, error class, the telling error line) read from a failing run's output.

    The test and the line come from ``learn.errors`` (each runner's own shape, never a banner such as
    pytest's ``===== FAILURES =====``); the error class is the first class name the output gives."""
    found = errors.read(output)
    test = found.test or next(iter(_FAILED_TEST.findall(output)), "")
    error = next(iter(_ERROR_CLASS.findall(output)), "") or (f"exit {exit_code}" if exit_code is not None else "")
    return test, error, found.line


def signature(command: str, test: str, error_class: str) -> str:
    """The failure signature (D-14): normalized command, failing test and error class, hashed locally."""
    return hashlib.blake2b(json.dumps([command, test, error_class]).encode(), digest_size=12).hexdigest()


# Harnesses whose hooks report a failed tool call on its own event (Claude Code's PostToolUseFailure): a
# completed shell call there without an exit code succeeded. Elsewhere a missing exit code is not known.
SUCCESS_WITHOUT_CODE = frozenset({"claude"})


def run_of(event: dict[str, Any]) -> tuple[str, int] | None:
    """(normalized command, exit code) of a shell call, or None when the event is not one with a known code."""
    command = event.get("command")
    if not isinstance(command, dict) or not isinstance(command.get("command"), str):
        return None
    code = command.get("exit_code")
    if code is None and (event.get("harness") or {}).get("name") in SUCCESS_WITHOUT_CODE:
        code = 0
    if not isinstance(code, int) or isinstance(code, bool):
        return None
    normalized = normalize_command(command["command"])
    return (normalized, code) if normalized else None


def _modified(event: dict[str, Any]) -> list[str]:
    found = event.get("file")
    if isinstance(found, dict) and found.get("op") == "modify" and isinstance(found.get("paths"), list):
        return [p for p in found["paths"] if isinstance(p, str) and p]
    return []


def in_session(events: Sequence[dict[str, Any]]) -> list[Pair]:
    """The failed → fixed pairs of one session's events, in order; at most one per failing command and fix.

    A failure followed by the same command passing with no file modified in between is a flake, not a fix, and
    gives nothing; so does a failure that never passes again.
    """
    pairs: list[Pair] = []
    failing: dict[str, tuple[dict[str, Any], list[dict[str, Any]]]] = {}  # command -> (last failure, edits since)
    for event in events:
        paths = _modified(event)
        if paths:
            for _, edits in failing.values():
                edits.append(event)
            continue
        run = run_of(event)
        if run is None or event.get("event", {}).get("action") != "tool.completed":
            continue
        command, code = run
        if code != 0:  # the latest failure of the streak, with every edit since its first
            failing[command] = (event, failing[command][1] if command in failing else [])
            continue
        if command not in failing:
            continue
        failed, edits = failing.pop(command)
        if not edits or event.get("ts", 0) - failed.get("ts", 0) > MAX_BETWEEN_MS:
            continue
        pairs.append(_pair(failed, edits, event, command))
    return pairs


def _pair(failed: dict[str, Any], edits: list[dict[str, Any]], passed: dict[str, Any], command: str) -> Pair:
    files = sorted({p for e in edits for p in _modified(e)})
    code = (failed.get("command") or {}).get("exit_code")
    test, error_class, line = failure_parts(command, _output(failed), code)
    session = failed.get("session") or {}
    return Pair(str(session.get("id", "")), str((failed.get("harness") or {}).get("name", "")),
                str((failed.get("vcs") or {}).get("repository", "")), command, failed, edits, passed, files,
                signature(command, test, error_class), test, error_class, line)


def by_session(events: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Events grouped by session id, in log order (events without a session are dropped)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        session = (event.get("session") or {}).get("id")
        if isinstance(session, str) and session:
            out.setdefault(session, []).append(event)
    return out


def failing_tests(output: str) -> list[str]:
    """Every failing test a run's output names (pytest's ``FAILED path::test``, and the like), in order."""
    found: list[str] = []
    for name in _FAILED_TEST.findall(output):
        if name not in found:
            found.append(name)
    return found
