"""Gemini CLI: hooks and the MCP server, both in ``.gemini/settings.json``. Its hook timeouts are in
milliseconds and its matchers are tool-name patterns, so gitive registers its hooks without a matcher
(every tool). Less certain than Claude and Codex: not installed unless asked for."""

from __future__ import annotations

from typing import Any

from gitive.install import base

NAME = "gemini"
SETTINGS = ".gemini/settings.json"
ENTRIES = base.claude_style_entries(NAME, {}, base.HOOK_TIMEOUT_S * 1000)


def _ensure(value: dict[str, Any]) -> None:
    base.ensure_claude_hooks(value, ENTRIES, SETTINGS)
    base.ensure_mcp(value, dict(base.MCP_SERVER), SETTINGS)


def _drop(value: dict[str, Any]) -> None:
    base.drop_claude_hooks(value)
    base.drop_mcp(value)


def targets() -> list[base.Target]:
    return [base.json_target(NAME, SETTINGS, ("hooks", "mcp"), _ensure, _drop,
                             lambda v: base.has_claude_hooks(v, ENTRIES) and base.has_mcp(v))]
