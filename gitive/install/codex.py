"""Codex CLI: hooks in ``.codex/hooks.json`` (Claude's structure) and the MCP server as a
``[mcp_servers.gitive]`` table in ``.codex/config.toml``.

The standard library can read TOML but not write it, so the table goes in a delimited block that gitive
owns (:mod:`gitive.install.textblock`); the rest of the file is never rewritten. Both the file as found and
the result must parse with ``tomllib``. Codex reads a project's ``.codex/`` only for trusted projects.
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from gitive.errors import GitiveError
from gitive.install import base, textblock

NAME = "codex"
HOOKS = ".codex/hooks.json"
CONFIG = ".codex/config.toml"
MATCHERS = {"SessionStart": "startup|resume|clear|compact", "PostToolUse": "*"}
ENTRIES = base.claude_style_entries(NAME, MATCHERS, base.HOOK_TIMEOUT_S)
# ``codex exec`` does not wait for an MCP server unless it is required; an interactive session waits up to
# ``startup_timeout_sec`` (``gitive mcp`` answers in well under a second, but a loaded machine may be slow).
TABLE = ('[mcp_servers.gitive]\ncommand = "gitive"\nargs = ["mcp"]\nstartup_timeout_sec = 20\n'
         "# For `codex exec` to wait for gitive's tools, add: required = true\n")
# Codex runs hooks it does not manage only once the user has reviewed and trusted them, per hash of the
# entry, and reads a project's .codex/ only in a trusted project (ECOSYSTEM-NOTES).
TRUST_STEP = ("Codex runs these hooks only after you trust them: start Codex in this repository, trust the "
              "project if it asks, then open /hooks and trust gitive's hooks (again after any change to "
              ".codex/hooks.json)")


def project_trusted(root: Path) -> bool | None:
    """Whether Codex's own config marks ``root`` a trusted project; None when that cannot be read.

    The hooks' own trust (per hash, given in ``/hooks``) is kept where gitive cannot check it.
    """
    home = Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
    try:
        projects = tomllib.loads((home / "config.toml").read_text(encoding="utf-8")).get("projects")
    except FileNotFoundError:
        return False  # Codex has trusted nothing yet
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    if not isinstance(projects, dict):
        return False
    for key in {str(root), str(root.resolve())}:
        entry = projects.get(key)
        if isinstance(entry, dict) and entry.get("trust_level") == "trusted":
            return True
    return False


def _parse(text: str, what: str) -> dict:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise GitiveError(f"{CONFIG} {what} ({exc}); fix it or move it away, then run `gitive install` again "
                          "(nothing was written)") from None


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise GitiveError(f"{CONFIG} is not UTF-8 text; fix it or move it away, then run `gitive install` "
                          "again (nothing was written)") from None


def _user_server(text: str) -> bool:
    """True when the user's part of the file (outside our block) already defines ``mcp_servers.gitive``."""
    servers = _parse(textblock.remove(text), "is not valid TOML").get("mcp_servers")
    return isinstance(servers, dict) and base.SERVER_NAME in servers


def _add(data: bytes | None) -> bytes:
    text = "" if data is None else _decode(data)
    _parse(text, "is not valid TOML")
    if _user_server(text):
        return text.encode("utf-8")
    new = textblock.put(text, TABLE)
    if new != text:
        _parse(new, "cannot take a [mcp_servers.gitive] table (is mcp_servers an inline table?)")
    return new.encode("utf-8")


def _remove(data: bytes) -> tuple[bytes, bool]:
    text = textblock.remove(_decode(data))
    return text.encode("utf-8"), not text.strip()


def _present(data: bytes | None) -> bool:
    if data is None:
        return False
    try:
        servers = tomllib.loads(data.decode("utf-8")).get("mcp_servers")
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    return isinstance(servers, dict) and base.SERVER_NAME in servers


def targets() -> list[base.Target]:
    hooks = base.json_target(
        NAME, HOOKS, ("hooks",),
        lambda v: base.ensure_claude_hooks(v, ENTRIES, HOOKS), base.drop_claude_hooks,
        lambda v: base.has_claude_hooks(v, ENTRIES))
    return [hooks, base.Target(NAME, CONFIG, ("mcp",), _add, _remove, _present)]
