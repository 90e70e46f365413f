"""Claude Code (``claude -p``) against the scripted model: Anthropic Messages with SSE.

Pointed at the server by ``ANTHROPIC_BASE_URL`` with a test key, and kept off the network by its own switches
(``DISABLE_TELEMETRY``, ``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC``, ``DISABLE_AUTOUPDATER``,
``DISABLE_ERROR_REPORTING``). Project hooks in ``.claude/settings.json`` run in ``-p`` without a trust prompt.
As root, ``--dangerously-skip-permissions`` is refused, so the tools a script calls are allowed by name
(``--allowedTools``). MCP servers connect in the background unless ``MCP_CONNECTION_NONBLOCKING=false``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from testing.harness import run
from testing.harness.server import ModelServer

NAME = "claude"
TOOLS = ("Edit", "Write", "Read", "Bash", "ToolSearch", "mcp__gitive")


def env(model: ModelServer, home: Path, gitive_home: Path | None, extra: Mapping[str, str] | None = None,
        budget: str | None = run.GENEROUS_BUDGET_MS) -> dict[str, str]:
    values = {"ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "sk-ant-scripted-test",
              "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
              "DISABLE_AUTOUPDATER": "1", "DISABLE_ERROR_REPORTING": "1", "DISABLE_BUG_COMMAND": "1",
              "CLAUDE_CODE_DISABLE_TERMINAL_TITLE": "1", **(extra or {})}
    return run.base_env(home, gitive_home, values, budget)


def command(prompt: str, tools: Sequence[str] = TOOLS, args: Sequence[str] = ()) -> list[str]:
    return [run.binary(NAME), "-p", prompt, "--output-format", "json", "--allowedTools", ",".join(tools), *args]


def session(model: ModelServer, repo: Path, home: Path, gitive_home: Path | None, prompt: str, *,
            extra_env: Mapping[str, str] | None = None, args: Sequence[str] = (), timeout: float = 180,
            budget: str | None = run.GENEROUS_BUDGET_MS) -> run.Run:
    """One ``claude -p`` in ``repo``; the script is whatever ``model.script`` is."""
    return run.execute(NAME, command(prompt, args=args), repo, env(model, home, gitive_home, extra_env, budget),
                       model, timeout)
