"""The person-at-a-terminal check in front of reviews and retractions.

This is a speed bump, not a guarantee: an agent with a shell can fake a TTY or clear its environment. It stops
the common case, an agent calling ``gitive review approve`` from its own tool loop, and it says so.
"""

from __future__ import annotations

import os
import sys

from gitive.errors import GitiveError

# Variables that harnesses set in the environment of the commands their agents run.
AGENT_ENV = (
    "CLAUDECODE",                # Claude Code
    "CLAUDE_CODE_ENTRYPOINT",    # Claude Code
    "CODEX_SANDBOX",             # Codex CLI
    "CODEX_SANDBOX_NETWORK_DISABLED",
    "CODEX_THREAD_ID",
    "CURSOR_AGENT",              # Cursor's agent terminal
    "CURSOR_TRACE_ID",
    "GEMINI_CLI",                # Gemini CLI
    "OPENCODE",                  # opencode
    "AIDER_MODEL",               # aider
    "GITIVE_AGENT",              # any harness can declare itself
)


class NotAPerson(GitiveError):
    pass


def agent_variables(environ: dict[str, str] | None = None) -> list[str]:
    env = os.environ if environ is None else environ
    return [name for name in AGENT_ENV if env.get(name)]


def require_person(action: str) -> None:
    """Refuse unless a person seems to be at a terminal.

    Raises:
        NotAPerson: no TTY on stdin and stdout, or the environment shows an agent harness.
    """
    found = agent_variables()
    if found:
        raise NotAPerson(f"{action} needs a person, and this environment shows an agent harness "
                         f"({', '.join(found)}): run it yourself in your own terminal")
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise NotAPerson(f"{action} needs a person at a terminal (a TTY); run it in your own terminal")
