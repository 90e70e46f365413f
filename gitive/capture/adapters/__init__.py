"""One adapter per harness, all with the same shape: how its hook payloads read, and how to answer it.

The contract of each harness, in one place (ECOSYSTEM-NOTES; ``hive-overview.md`` part 2 §3.6):

| harness | config file            | our event    | its hook           | context reply                                         | no-opinion |
|---------|------------------------|--------------|--------------------|-------------------------------------------------------|------------|
| claude  | .claude/settings.json  | session-start| SessionStart       | hookSpecificOutput.additionalContext                  | ``{}``     |
|         |                        | prompt       | UserPromptSubmit   | hookSpecificOutput.additionalContext                  | ``{}``     |
|         |                        | post-tool    | PostToolUse        | hookSpecificOutput.additionalContext                  | ``{}``     |
|         |                        | post-tool-failure | PostToolUseFailure | hookSpecificOutput.additionalContext           | ``{}``     |
|         |                        | stop         | Stop               | decision=block + reason (never when stop_hook_active) | ``{}``     |
|         |                        | session-end  | SessionEnd         | (none: output is not read)                            | ``{}``     |
| codex   | .codex/hooks.json      | same events and shapes as claude (input adds ``turn_id``)                   | ``{}``     |
| cursor  | .cursor/hooks.json     | session-start| sessionStart       | additional_context                                    | ``{}``     |
|         |                        | post-tool    | postToolUse        | additional_context                                    | ``{}``     |
|         |                        | stop         | stop               | followup_message                                      | ``{}``     |
| gemini  | .gemini/settings.json  | session-start| SessionStart       | hookSpecificOutput.additionalContext                  | ``{}``     |
|         |                        | post-tool    | AfterTool          | hookSpecificOutput.additionalContext                  | ``{}``     |
|         |                        | session-end  | SessionEnd         | (none)                                                | ``{}``     |

No adapter ever answers ``allow``/``approve`` or registers a pre-tool hook: on several harnesses that reads as
pre-approval. opencode takes TypeScript plugins rather than command hooks; it is reached through MCP only.
"""

from __future__ import annotations

from gitive.capture.adapters import claude, codex, cursor, gemini
from gitive.capture.adapters.base import Adapter

ADAPTERS: dict[str, Adapter] = {a.NAME: a.ADAPTER for a in (claude, codex, cursor, gemini)}
EVENTS = ("session-start", "prompt", "post-tool", "post-tool-failure", "stop", "session-end")
