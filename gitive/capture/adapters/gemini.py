"""Gemini CLI: ``.gemini/settings.json`` hooks (SessionStart, BeforeAgent, AfterTool, SessionEnd), Claude-like
shapes.

BeforeAgent runs after the user submits a prompt, before the agent plans: Gemini's UserPromptSubmit, where
prompt-time recall goes (its input carries ``prompt``). AfterTool context is appended to the tool's result as
``<hook_context>``. Gemini documents no size cap for
``additionalContext``: gitive keeps it under Codex's, 8,000 UTF-8 bytes.
"""

from __future__ import annotations

from gitive.capture.adapters.base import NO_OPINION, Adapter, first_str, hook_specific

# typing costs each hook process about 5 ms to import; with postponed annotations it is needed only by checkers
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "gemini"
HOOKS = {"session-start": "SessionStart", "prompt": "BeforeAgent", "post-tool": "AfterTool",
         "session-end": "SessionEnd"}
CONTEXT = frozenset({"session-start", "prompt", "post-tool"})
CAP = 8_000


def reply(event: str, context: str | None, payload: dict[str, Any]) -> str:
    if not context or event not in CONTEXT:
        return NO_OPINION
    return hook_specific(HOOKS[event], context)


ADAPTER = Adapter(
    name=NAME,
    hooks=HOOKS,
    session_key=lambda p: first_str(p, "session_id"),
    cwd_key=lambda p: first_str(p, "cwd"),
    reply=reply,
    context=CONTEXT,
    mail=CONTEXT,
    cap=CAP,
)
