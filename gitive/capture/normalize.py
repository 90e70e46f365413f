"""Turning a harness's hook payload into a normalized event (stdlib only)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from gitive.capture import events
from gitive.capture.adapters.base import PLAN_TOOLS, READ_TOOLS, SHELL_TOOLS, WRITE_TOOLS, Adapter
from gitive.capture.redact import redact_text

# typing costs each hook process about 5 ms to import; with postponed annotations it is needed only by checkers
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ACTIONS = {"session-start": "session.start", "prompt": "prompt.submitted", "post-tool": "tool.completed",
           "post-tool-failure": "tool.completed", "stop": "turn.stop", "session-end": "session.end"}
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.MULTILINE)
_EXIT = re.compile(r"(?:exit(?:ed with)? (?:code|status)|returncode)[\s:=]*(-?\d+)", re.IGNORECASE)
_PATH_KEYS = ("file_path", "path", "notebook_path", "filePath", "absolute_path", "target_file", "file")
_UNENCODABLE = re.compile("[\ud800-\udfff\x00]")  # lone surrogates (JSON escapes allow them) and NUL


def scrub(value: Any) -> Any:
    """``value`` (a parsed payload) with every lone surrogate and NUL, in keys and strings, replaced by U+FFFD.

    JSON lets a harness (or anything that writes to a hook's stdin) send ``"\\ud800"``, which is no Unicode
    text: written to the event log it made every later reader fail, and as a path it cannot be opened.
    """
    if isinstance(value, str):
        return _UNENCODABLE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {scrub(k): scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    return value


def parse_payload(raw: bytes) -> Any:
    """A hook's stdin as JSON: bytes that are not UTF-8 become U+FFFD, and so does text :func:`scrub` removes
    (only looked for when the text holds an escape that could spell it, so big payloads cost nothing more)."""
    text = raw.decode("utf-8", "replace")
    if not text.strip():
        return {}
    payload = json.loads(text)
    return scrub(payload) if "\\u" in text else payload


def _as_dict(value: Any) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return {"text": value}
        return parsed if isinstance(parsed, dict) else {"text": value}
    return {}


def relative(path: str, root: Path | None) -> str:
    if root is not None and path.startswith("/"):
        try:
            return str(Path(path).resolve().relative_to(root.resolve()))
        except ValueError:
            return path
    return path.removeprefix("./")


def _paths(tool_input: dict[str, Any], root: Path | None) -> list[str]:
    found = [tool_input[k] for k in _PATH_KEYS if isinstance(tool_input.get(k), str)]
    for key in ("paths", "files"):
        if isinstance(tool_input.get(key), list):
            found += [p for p in tool_input[key] if isinstance(p, str)]
    for key in ("patch", "input", "command"):
        if isinstance(tool_input.get(key), str) and "*** " in tool_input[key]:
            found += _PATCH_FILE.findall(tool_input[key])
    return sorted({relative(p.strip(), root) for p in found if p.strip()})


def _exit_code(response: dict[str, Any]) -> int | None:
    for key in ("exit_code", "exitCode", "returncode", "return_code", "status_code"):
        value = response.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    for key in ("stderr", "stdout", "output", "text", "result", "llmContent", "returnDisplay", "error"):
        text = response.get(key)
        # Codex leads with "Exit code: N", Gemini and shells end with it: look at both ends of long output.
        if isinstance(text, str) and (m := _EXIT.search(text[:2000]) or _EXIT.search(text[-2000:])):
            return int(m.group(1))
    if response.get("interrupted") is True:
        return 130
    return None


def _output_text(response: dict[str, Any]) -> str:
    parts = [response.get(k) for k in ("stderr", "stdout", "output", "text", "error", "result", "llmContent")]
    # Redact before cutting: a cut through a token or a PEM block would leave a piece no pattern recognises.
    return redact_text("\n".join(p for p in parts if isinstance(p, str)))[-4000:]


def _doing(tool_input: dict[str, Any]) -> str | None:
    todos = tool_input.get("todos") or tool_input.get("plan") or []
    if isinstance(todos, list):
        for item in todos:
            if isinstance(item, dict) and item.get("status") == "in_progress":
                text = item.get("content") or item.get("step") or item.get("activeForm")
                if isinstance(text, str):
                    return text[:200]
    return None


OPEN_STEPS = ("pending", "in_progress")  # Claude's TodoWrite, Codex's update_plan, Gemini CLI's write_todos


def _plan(tool_input: dict[str, Any]) -> dict[str, int] | None:
    """A plan tool's steps and how many are not done, or None when the call carries no list of steps.

    Presence publishes the count as ``open_steps`` (never the steps' words), so a session that ends with work
    left and no handoff becomes dangling work the anchor can see (gitive/anchor/obligations/dangling.py)."""
    todos = tool_input.get("todos") if "todos" in tool_input else tool_input.get("plan")
    if not isinstance(todos, list):
        return None
    steps = [t for t in todos if isinstance(t, dict)]
    return {"steps": len(steps), "open": sum(1 for t in steps if t.get("status") in OPEN_STEPS)}


def tool_fields(adapter: Adapter, payload: dict[str, Any], root: Path | None) -> dict[str, Any]:
    name_key, input_key, response_key = adapter.tool_fields
    name = str(payload.get(name_key) or "")
    tool_input = _as_dict(payload.get(input_key))
    response = _as_dict(payload.get(response_key) or payload.get("tool_result"))
    if isinstance(payload.get("error"), str):  # Claude Code's PostToolUseFailure: the call failed
        response = {**response, "error": payload["error"]}
        response.setdefault("exit_code", _exit_code({"error": payload["error"]}) or 1)
    lowered = name.lower().split("__")[-1]
    fields: dict[str, Any] = {"tool": {"name": name, "call_id": payload.get("tool_use_id") or payload.get("call_id")}}
    paths = _paths(tool_input, root)
    if paths:
        op = "modify" if lowered in WRITE_TOOLS or "patch" in lowered else "read" if lowered in READ_TOOLS else "touch"
        fields["file"] = {"paths": paths[:64], "op": op}
    patch = "*** Begin Patch" in str(tool_input.get("command") or tool_input.get("input") or "")
    if (lowered in SHELL_TOOLS or "command" in tool_input) and not patch:  # a patch is content, not a command
        command = tool_input.get("command") or tool_input.get("cmd")
        if isinstance(command, list):
            command = " ".join(str(c) for c in command)
        fields["command"] = {"command": redact_text(str(command or ""))[:2000], "exit_code": _exit_code(response)}
    if lowered in PLAN_TOOLS and (doing := _doing(tool_input)):
        fields["doing"] = doing
    if lowered in PLAN_TOOLS and (plan := _plan(tool_input)) is not None:
        fields["plan"] = plan
    fields["output"] = {"text": _output_text(response)}
    return fields


def event_for(adapter: Adapter, our_event: str, payload: dict[str, Any], root: Path | None) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if our_event in ("post-tool", "post-tool-failure"):
        fields = tool_fields(adapter, payload, root)
    elif our_event == "prompt":
        prompt = payload.get("prompt") or payload.get("user_prompt")
        fields["prompt"] = {"text": prompt if isinstance(prompt, str) else ""}
    elif our_event == "session-start":
        fields["source"] = payload.get("source")
    turn = payload.get(adapter.extra.get("turn_key", "turn_id")) or payload.get("generation_id")
    if turn:
        fields["turn"] = {"id": str(turn)}
    if root is not None:
        fields["vcs"] = {"repository": str(root)}
    return events.make(ACTIONS[our_event], harness=adapter.name, session=adapter.session_key(payload),
                       cwd=adapter.cwd_key(payload), **fields)
