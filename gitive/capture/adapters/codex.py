"""Codex CLI: ``.codex/hooks.json`` with Claude's structure and output shapes; input adds ``turn_id``."""

from __future__ import annotations

from gitive.capture.adapters import claude
from gitive.capture.adapters.base import Adapter, first_str

NAME = "codex"
HOOKS = {"session-start": "SessionStart", "prompt": "UserPromptSubmit", "post-tool": "PostToolUse",
         "stop": "Stop"}

ADAPTER = Adapter(
    name=NAME,
    hooks=HOOKS,
    session_key=lambda p: first_str(p, "session_id", "thread_id", "conversation_id"),
    cwd_key=lambda p: first_str(p, "cwd"),
    reply=claude.reply,
    extra={"turn_key": "turn_id"},
)
