"""One adapter per harness, all with the same shape: how its hook payloads read, and how to answer it.

The contract of each harness, in one place (ECOSYSTEM-NOTES; ``hive-overview.md`` part 2 §3.6). A teammate's
text only ever goes through a *context* channel; where a harness offers nothing but a continuation prompt
(which it submits as its user's words), gitive answers no-opinion and the items wait for the next context
channel. Caps are UTF-8 bytes of one context field.

| harness | config file           | our event         | its hook           | context channel                      | messages | cap   |
|---------|-----------------------|-------------------|--------------------|--------------------------------------|----------|-------|
| claude  | .claude/settings.json | session-start     | SessionStart       | hookSpecificOutput.additionalContext | yes      | 9,000 |
|         |                       | prompt            | UserPromptSubmit   | hookSpecificOutput.additionalContext | yes      |       |
|         |                       | post-tool         | PostToolUse        | hookSpecificOutput.additionalContext | yes      |       |
|         |                       | post-tool-failure | PostToolUseFailure | hookSpecificOutput.additionalContext | yes      |       |
|         |                       | stop              | Stop               | none (``decision: block`` continues) | wait     |       |
|         |                       | session-end       | SessionEnd         | none (output is not read)            | wait     |       |
| codex   | .codex/hooks.json     | as claude, without post-tool-failure and session-end; Stop's    | wait     | 8,000 |
|         |                       | ``reason`` becomes a new user prompt                              |          |       |
| cursor  | .cursor/hooks.json    | session-start     | sessionStart       | additional_context (fire-and-forget) | wait     | 8,000 |
|         |                       | post-tool         | postToolUse        | additional_context                   | yes      |       |
|         |                       | stop              | stop               | none (``followup_message`` is a user message) | wait |  |
| gemini  | .gemini/settings.json | session-start     | SessionStart       | hookSpecificOutput.additionalContext | yes      | 8,000 |
|         |                       | prompt            | BeforeAgent        | hookSpecificOutput.additionalContext | yes      |       |
|         |                       | post-tool         | AfterTool          | hookSpecificOutput.additionalContext | yes      |       |
|         |                       | session-end       | SessionEnd         | none                                 | wait     |       |

Every no-opinion reply is ``{}``. No adapter ever answers ``allow``/``approve`` or registers a pre-tool hook:
on several harnesses that reads as pre-approval. opencode takes TypeScript plugins rather than command hooks;
it is reached through MCP only.
"""

from __future__ import annotations

from gitive.capture.adapters import claude, codex, cursor, gemini
from gitive.capture.adapters.base import Adapter

ADAPTERS: dict[str, Adapter] = {a.NAME: a.ADAPTER for a in (claude, codex, cursor, gemini)}
EVENTS = ("session-start", "prompt", "post-tool", "post-tool-failure", "stop", "session-end")
