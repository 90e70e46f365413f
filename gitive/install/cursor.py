"""Cursor: ``.cursor/hooks.json`` (``{"version": 1, "hooks": {"<hook>": [{"command": ...}]}}``) and
``.cursor/mcp.json``. Less certain than Claude and Codex (see ``gitive.capture.adapters``)."""

from __future__ import annotations

from typing import Any

from gitive.capture.adapters import ADAPTERS
from gitive.install import base, jsonfile

NAME = "cursor"
HOOKS = ".cursor/hooks.json"
MCP = ".cursor/mcp.json"
COMMANDS = {hook: base.command(NAME, event) for event, hook in ADAPTERS[NAME].hooks.items()}


def _ensure(value: dict[str, Any]) -> None:
    value.setdefault("version", 1)
    hooks = jsonfile.child(value, "hooks", dict, HOOKS)
    for hook in [h for h in hooks if h not in COMMANDS]:
        _drop_list(hooks, hook)
    for hook, cmd in COMMANDS.items():
        entries = jsonfile.child(hooks, hook, list, HOOKS)
        if not any(isinstance(e, dict) and e.get("command") == cmd for e in entries):
            entries[:] = [e for e in entries if not base.is_ours(e)] + [{"command": cmd}]


def _drop_list(hooks: dict[str, Any], hook: str) -> None:
    entries = hooks[hook]
    if isinstance(entries, list) and any(base.is_ours(e) for e in entries):
        entries[:] = [e for e in entries if not base.is_ours(e)]
        if not entries:
            del hooks[hook]


def _drop(value: dict[str, Any]) -> None:
    hooks = value.get("hooks")
    if not isinstance(hooks, dict) or not hooks:
        return
    for hook in list(hooks):
        _drop_list(hooks, hook)
    if not hooks:
        del value["hooks"]
        if value == {"version": 1}:  # nothing left but the header install wrote with the hooks
            del value["version"]


def _has(value: dict[str, Any]) -> bool:
    hooks = value.get("hooks")
    return isinstance(hooks, dict) and all(
        isinstance(hooks.get(hook), list) and any(isinstance(e, dict) and e.get("command") == cmd
                                                  for e in hooks[hook])
        for hook, cmd in COMMANDS.items())


def targets() -> list[base.Target]:
    return [base.json_target(NAME, HOOKS, ("hooks",), _ensure, _drop, _has),
            base.mcp_target(NAME, MCP, dict(base.MCP_SERVER))]
