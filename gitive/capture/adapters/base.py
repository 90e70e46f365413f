"""The adapter shape every harness module fills in (stdlib only: this runs in every hook)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

NO_OPINION = "{}"

# Tools whose input names files they read or modify, by harness-neutral name.
READ_TOOLS = {"read", "read_file", "view", "glob", "grep", "ls", "notebookread", "read_many_files"}
WRITE_TOOLS = {"edit", "write", "multiedit", "notebookedit", "apply_patch", "write_file", "replace", "create",
               "str_replace_editor", "edit_file"}
SHELL_TOOLS = {"bash", "shell", "run_shell_command", "terminal", "exec_command", "local_shell"}
PLAN_TOOLS = {"todowrite", "update_plan", "write_todos"}


class Adapter:
    """How one harness speaks: its hook names, how to read a payload, how to answer.

    A plain class on purpose: ``dataclasses`` costs ~20 ms to import, and this runs in every hook.
    """

    __slots__ = ("cwd_key", "extra", "hooks", "name", "reply", "session_key", "tool_fields")

    def __init__(self, name: str, hooks: dict[str, str], session_key: Callable[[dict[str, Any]], str | None],
                 cwd_key: Callable[[dict[str, Any]], str | None],
                 reply: Callable[[str, str | None, dict[str, Any]], str],
                 tool_fields: tuple[str, str, str] = ("tool_name", "tool_input", "tool_response"),
                 extra: dict[str, Any] | None = None) -> None:
        self.name, self.hooks, self.session_key, self.cwd_key = name, hooks, session_key, cwd_key
        self.reply, self.tool_fields, self.extra = reply, tool_fields, extra or {}


def hook_specific(event_name: str, context: str) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": event_name, "additionalContext": context}})


def first_str(payload: dict[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = payload.get(key)
        if isinstance(value, str) and value:
            return value
    return None
