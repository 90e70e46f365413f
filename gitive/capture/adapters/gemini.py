"""Gemini CLI: ``.gemini/settings.json`` hooks (SessionStart, AfterTool, SessionEnd), Claude-like shapes."""

from __future__ import annotations

from typing import Any

from gitive.capture.adapters.base import NO_OPINION, Adapter, first_str, hook_specific

NAME = "gemini"
HOOKS = {"session-start": "SessionStart", "post-tool": "AfterTool", "session-end": "SessionEnd"}


def reply(event: str, context: str | None, payload: dict[str, Any]) -> str:
    if not context or event not in ("session-start", "post-tool"):
        return NO_OPINION
    return hook_specific(HOOKS[event], context)


ADAPTER = Adapter(
    name=NAME,
    hooks=HOOKS,
    session_key=lambda p: first_str(p, "session_id"),
    cwd_key=lambda p: first_str(p, "cwd"),
    reply=reply,
)
