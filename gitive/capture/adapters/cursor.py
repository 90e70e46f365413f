"""Cursor: ``.cursor/hooks.json`` (version 1); camelCase hooks, ``workspace_roots`` instead of ``cwd``.

Less certain than Claude and Codex: the assumptions are this module and its recorded payloads. We register
no ``before*`` hook: Cursor's no-opinion there is an ``allow`` object, which we never want to print.
"""

from __future__ import annotations

import json
from typing import Any

from gitive.capture.adapters.base import NO_OPINION, Adapter, first_str

NAME = "cursor"
HOOKS = {"session-start": "sessionStart", "post-tool": "postToolUse", "stop": "stop"}


def reply(event: str, context: str | None, payload: dict[str, Any]) -> str:
    if not context:
        return NO_OPINION
    if event == "stop":
        return json.dumps({"followup_message": context})
    return json.dumps({"additional_context": context})


def _cwd(payload: dict[str, Any]) -> str | None:
    roots = payload.get("workspace_roots")
    if isinstance(roots, list) and roots and isinstance(roots[0], str):
        return roots[0]
    return first_str(payload, "cwd")


ADAPTER = Adapter(
    name=NAME,
    hooks=HOOKS,
    session_key=lambda p: first_str(p, "conversation_id", "session_id"),
    cwd_key=_cwd,
    reply=reply,
    tool_fields=("tool_name", "tool_input", "tool_output"),
)
