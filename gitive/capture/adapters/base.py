"""The adapter shape every harness module fills in (stdlib only: this runs in every hook)."""

from __future__ import annotations

import json
from collections.abc import Callable

# typing costs each hook process about 5 ms to import; with postponed annotations it is needed only by checkers
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


NO_OPINION = "{}"

# Tools whose input names files they read or modify, by harness-neutral name.
READ_TOOLS = {"read", "read_file", "view", "glob", "grep", "ls", "notebookread", "read_many_files"}
WRITE_TOOLS = {"edit", "write", "multiedit", "notebookedit", "apply_patch", "write_file", "replace", "create",
               "str_replace_editor", "edit_file"}
SHELL_TOOLS = {"bash", "shell", "run_shell_command", "terminal", "exec_command", "local_shell"}
PLAN_TOOLS = {"todowrite", "update_plan", "write_todos"}


class Adapter:
    """How one harness speaks: its hook names, how to read a payload, where context may go, how to answer.

    ``context`` lists our events whose reply has a context channel (text the model reads as context, never
    as its user's words); ``mail`` the subset where teammates' messages and notices may be delivered;
    ``cap`` the most UTF-8 bytes one context field may hold. A plain class on purpose: ``dataclasses``
    costs ~20 ms to import, and this runs in every hook.
    """

    __slots__ = ("cap", "context", "cwd_key", "extra", "hooks", "mail", "name", "reply", "session_key",
                 "tool_fields")

    def __init__(self, name: str, hooks: dict[str, str], session_key: Callable[[dict[str, Any]], str | None],
                 cwd_key: Callable[[dict[str, Any]], str | None],
                 reply: Callable[[str, str | None, dict[str, Any]], str], *, context: frozenset[str],
                 mail: frozenset[str], cap: int,
                 tool_fields: tuple[str, str, str] = ("tool_name", "tool_input", "tool_response"),
                 extra: dict[str, Any] | None = None) -> None:
        self.name, self.hooks, self.session_key, self.cwd_key = name, hooks, session_key, cwd_key
        self.reply, self.tool_fields, self.extra = reply, tool_fields, extra or {}
        self.context, self.mail, self.cap = context, mail & context, cap


def hook_specific(event_name: str, context: str) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": context}})


def first_str(payload: dict[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = payload.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def fits(text: str, cap: int) -> bool:
    return len(text.encode("utf-8", "surrogatepass")) <= cap
