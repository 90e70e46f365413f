"""A draft's text: written by a configured writer command (a headless agent harness), else a skeleton.

The writer is any command (``hive.learnWriter`` in git config, or ``GITIVE_LEARN_WRITER``) that reads one JSON
object on stdin, the pair's projection, and prints one JSON object: ``text`` (required), and optionally
``applicability``, ``kind``, ``symptoms``, ``tags`` and ``reuse`` (0..100, its judgement of reuse). It runs on
this machine; whatever it sends elsewhere is the configuration's choice, and ``docs/learn.md`` says so.

The projection keeps the structured fields the critique says a scorer must see (the command, its exit code,
the files and how they changed) and the reference's cuts: at most 80 events, the first and last 40 with an
``omitted`` marker between them, every text cut to 1,200 characters. Without a writer, or when it fails, the
text is a deterministic skeleton built from the evidence (the symptom, the change that fixed it, the files) for
the person or their agent to finish; it is never a template about the trace or its scores.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from collections.abc import Sequence
from typing import Any, NamedTuple

from gitive.core.lessons import MAX_TEXT
from gitive.learn.pairs import Pair

CONFIG_KEY = "hive.learnWriter"
ENV = "GITIVE_LEARN_WRITER"
TIMEOUT_S = 180
MAX_EVENTS, KEEP = 80, 40
MAX_FIELD = 1200
WRITABLE_KINDS = ("Convention", "Correction", "Gotcha", "Routing")  # Decision and Preference need a person's quote


class Written(NamedTuple):
    kind: str
    text: str
    applicability: str
    symptoms: list[str]
    writer: str  # "skeleton" or "command"
    reuse: int | None  # the writer's reuse score, if it gave one
    problem: str  # why the writer was not used ("" when it was, or none is configured)


def configured(repo_path: str) -> str | None:
    """The writer command for the repository at ``repo_path`` (the environment wins over git config)."""
    if os.environ.get(ENV) is not None:
        return os.environ[ENV].strip() or None
    if not repo_path:
        return None
    from gitive.errors import GitiveError
    from gitive.store.repo import config_get, open_repo

    try:
        return (config_get(open_repo(repo_path), CONFIG_KEY) or "").strip() or None
    except (GitiveError, OSError):
        return None


def _cut(value: Any) -> Any:
    if isinstance(value, str):
        return value if len(value) <= MAX_FIELD else value[:MAX_FIELD] + f"…[{len(value) - MAX_FIELD} cut]"
    if isinstance(value, dict):
        return {k: _cut(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_cut(v) for v in value]
    return value


def _event(event: dict[str, Any]) -> dict[str, Any]:
    """One event as the writer sees it: action, time, command with exit code, files, output, fidelity."""
    keep = {"timestamp": event.get("timestamp"), "action": (event.get("event") or {}).get("action"),
            "id": (event.get("event") or {}).get("id")}
    for key in ("command", "file", "output", "prompt", "tool", "fidelity"):
        if key in event:
            keep[key] = event[key]
    return _cut(keep)


def projection(pair: Pair, session_events: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """What the writer reads: the pair's evidence and the session's events from the failure to the pass."""
    ids = [(e.get("event") or {}).get("id") for e in session_events]
    start = ids.index(pair.failed["event"]["id"]) if pair.failed["event"].get("id") in ids else 0
    end = ids.index(pair.passed["event"]["id"]) + 1 if pair.passed["event"].get("id") in ids else len(ids)
    window = [_event(e) for e in session_events[start:end]]
    if len(window) > MAX_EVENTS:
        window = [*window[:KEEP], {"omitted": len(window) - 2 * KEEP}, *window[-KEEP:]]
    return {"harness": pair.harness, "repository": pair.repo, "command": pair.command,
            "failing_test": pair.test, "error_class": pair.error_class, "error_line": pair.error_line,
            "files_changed": pair.files, "events": window,
            "asked": "Write the lesson a future agent should know: what the failure means and what fixed it."}


def skeleton(pair: Pair) -> Written:
    """The deterministic draft: the symptom, the change that fixed it, the files."""
    what = pair.error_class or "an error"
    where = f" in {pair.test}" if pair.test else ""
    line = f": {pair.error_line}" if pair.error_line else ""
    files = ", ".join(pair.files[:6]) + (f" and {len(pair.files) - 6} more" if len(pair.files) > 6 else "")
    text = (f"`{pair.command}` failed with {what}{where}{line}. It passed again after changing {files}. "
            "(Skeleton drafted from this machine's session: say why the change fixed it before accepting.)")
    symptoms = [s for s in dict.fromkeys([pair.error_line, f"{pair.command} fails with {what}"]) if s]
    return Written("Gotcha", text[:MAX_TEXT], f"When `{pair.command}` fails with {what}."[:400],
                   [s[:300] for s in symptoms][:8], "skeleton", None, "")


def write(pair: Pair, session_events: Sequence[dict[str, Any]]) -> Written:
    """The writer command's draft when one is configured and answers well, else the skeleton."""
    command = configured(pair.repo)
    if not command:
        return skeleton(pair)
    try:
        done = subprocess.run(shlex.split(command), input=json.dumps(projection(pair, session_events)),
                              capture_output=True, text=True, timeout=TIMEOUT_S, cwd=pair.repo or None)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return skeleton(pair)._replace(problem=f"writer command failed to run: {exc}")
    if done.returncode != 0:
        return skeleton(pair)._replace(problem=f"writer command exited {done.returncode}: {done.stderr.strip()[:200]}")
    try:
        return _parse(done.stdout)
    except ValueError as exc:
        return skeleton(pair)._replace(problem=f"writer command's answer was not usable: {exc}")


def _parse(stdout: str) -> Written:
    from gitive.learn.gate import clamp

    answer = json.loads(stdout)
    if not isinstance(answer, dict) or not isinstance(answer.get("text"), str) or not answer["text"].strip():
        raise ValueError("it needs a JSON object with a non-empty `text`")
    if len(answer["text"]) > MAX_TEXT:
        raise ValueError(f"`text` is {len(answer['text'])} characters; the limit is {MAX_TEXT}")
    kind = answer.get("kind") if answer.get("kind") in WRITABLE_KINDS else "Gotcha"
    symptoms = [s[:300] for s in answer.get("symptoms", []) if isinstance(s, str) and s.strip()][:8]
    applicability = answer.get("applicability") if isinstance(answer.get("applicability"), str) else ""
    return Written(kind, answer["text"].strip(), applicability[:400], symptoms, "command", clamp(answer.get("reuse")),
                   "")
