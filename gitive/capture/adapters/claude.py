"""Claude Code: ``.claude/settings.json`` hooks; context through ``hookSpecificOutput.additionalContext``.

``Stop`` offers only ``decision: block`` with a ``reason``, which Claude reads as why it must go on: a
continuation prompt, not context. So nothing is ever said at ``Stop``; what waits is shown at the next tool
call or session start. Each context field holds at most 10,000 characters (more is saved to a file and only a
preview is shown): gitive keeps a field under 9,000 UTF-8 bytes.
"""

from __future__ import annotations

from gitive.capture.adapters.base import NO_OPINION, Adapter, first_str, hook_specific

# typing costs each hook process about 5 ms to import; with postponed annotations it is needed only by checkers
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "claude"
HOOKS = {"session-start": "SessionStart", "prompt": "UserPromptSubmit", "post-tool": "PostToolUse",
         "post-tool-failure": "PostToolUseFailure", "stop": "Stop", "session-end": "SessionEnd"}
CONTEXT = frozenset({"session-start", "prompt", "post-tool", "post-tool-failure"})
CAP = 9_000


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
