"""Claude Code: ``.claude/settings.json`` hooks; context through ``hookSpecificOutput.additionalContext``."""

from __future__ import annotations

import json
from typing import Any

from gitive.capture.adapters.base import NO_OPINION, Adapter, first_str, hook_specific

NAME = "claude"
HOOKS = {"session-start": "SessionStart", "prompt": "UserPromptSubmit", "post-tool": "PostToolUse",
         "post-tool-failure": "PostToolUseFailure", "stop": "Stop", "session-end": "SessionEnd"}


def reply(event: str, context: str | None, payload: dict[str, Any]) -> str:
    if not context or event == "session-end":
        return NO_OPINION
    if event == "stop":
        # Blocking a stop shows the reason to the model; never twice in a row, or the agent never stops.
        if payload.get("stop_hook_active"):
            return NO_OPINION
        return json.dumps({"decision": "block", "reason": context})
    return hook_specific(HOOKS[event], context)


ADAPTER = Adapter(
    name=NAME,
    hooks=HOOKS,
    session_key=lambda p: first_str(p, "session_id"),
    cwd_key=lambda p: first_str(p, "cwd"),
    reply=reply,
)
