"""Codex CLI: ``.codex/hooks.json`` with Claude's structure and output shapes; input adds ``turn_id``.

A ``Stop`` block turns its ``reason`` into a new *user* prompt, so gitive never answers one. Context is capped
at about 2,500 tokens per hook (``additionalContextLimit``), which Codex counts as 4 bytes a token: gitive keeps
a field under 8,000 UTF-8 bytes, a fifth below that.
"""

from __future__ import annotations

from gitive.capture.adapters import claude
from gitive.capture.adapters.base import Adapter, first_str

NAME = "codex"
HOOKS = {"session-start": "SessionStart", "prompt": "UserPromptSubmit", "post-tool": "PostToolUse",
         "stop": "Stop"}
CONTEXT = frozenset({"session-start", "prompt", "post-tool"})
CAP = 8_000

ADAPTER = Adapter(
    name=NAME,
    hooks=HOOKS,
    session_key=lambda p: first_str(p, "session_id", "thread_id", "conversation_id"),
    cwd_key=lambda p: first_str(p, "cwd"),
    reply=claude.reply,
    context=CONTEXT,
    mail=CONTEXT,
    cap=CAP,
    extra={"turn_key": "turn_id"},
)
