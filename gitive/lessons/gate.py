"""The person-at-a-terminal check in front of every decision command.

This is a first check, not the guarantee: an agent with a shell can fake a TTY or clear its environment. It
stops the common case, an agent calling ``gitive review approve`` from its own tool loop, and it says so. The
guarantee is the gesture: a decision counts only when signed with the person key, which the passphrase (or
ssh-agent's confirmation) unlocks and an agent does not have (``gitive.core.personkey``).
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


def require_person(action: str, scripted: bool = False) -> None:
    """Refuse unless a person seems to be at a terminal (or, ``scripted``, gives the passphrase on stdin).

    Raises:
        NotAPerson: no TTY on stdin and stdout (unless ``scripted``), or the environment shows an agent harness.
    """
    found = agent_variables()
    if found:
        raise NotAPerson(f"{action} needs a person, and this environment shows an agent harness "
                         f"({', '.join(found)}): run it yourself in your own terminal")
    if scripted:
        return
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise NotAPerson(f"{action} needs a person at a terminal (a TTY); run it in your own terminal")
