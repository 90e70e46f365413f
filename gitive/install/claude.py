"""Claude Code: hooks in ``.claude/settings.json``, the MCP server in ``.mcp.json`` (ECOSYSTEM-NOTES)."""

from __future__ import annotations

from gitive.install import base

NAME = "claude"
SETTINGS = ".claude/settings.json"
MCP = ".mcp.json"
# SessionStart's matcher names the ways a session starts ("fork": --fork-session, /fork and /branch); "*" on
# PostToolUse matches every tool.
MATCHERS = {"SessionStart": "startup|resume|clear|compact|fork", "PostToolUse": "*"}
ENTRIES = base.claude_style_entries(NAME, MATCHERS, base.HOOK_TIMEOUT_S)


def targets() -> list[base.Target]:
    hooks = base.json_target(
        NAME, SETTINGS, ("hooks",),
        lambda v: base.ensure_claude_hooks(v, ENTRIES, SETTINGS), base.drop_claude_hooks,
        lambda v: base.has_claude_hooks(v, ENTRIES))
    return [hooks, base.mcp_target(NAME, MCP, {"type": "stdio", **base.MCP_SERVER})]
