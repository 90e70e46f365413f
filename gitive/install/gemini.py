"""Gemini CLI: hooks and the MCP server, both in ``.gemini/settings.json``. Its hook timeouts are in
milliseconds and its matchers are tool-name patterns, so gitive registers its hooks without a matcher
(every tool). Less certain than Claude and Codex: not installed unless asked for."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from gitive.install import base

NAME = "gemini"
SETTINGS = ".gemini/settings.json"
ENTRIES = base.claude_style_entries(NAME, {}, base.HOOK_TIMEOUT_S * 1000)
# Gemini CLI 0.61 runs a project's hooks and MCP servers only in a trusted folder; headless (`gemini -p`) in an
# untrusted one it exits 55 before any of them (docs/hooks.md).
TRUST_STEP = ("Gemini CLI runs these hooks and gitive's MCP server only in a trusted folder: start `gemini` in "
              "this repository and choose \"Trust folder\" (or add it to ~/.gemini/trustedFolders.json as "
              "TRUST_FOLDER); headless, an untrusted folder exits 55 before any hook runs")
_TRUSTS = {"TRUST_FOLDER": lambda key: key, "TRUST_PARENT": lambda key: key.parent}


def folder_trusted(root: Path) -> bool | None:
    """Whether Gemini CLI trusts ``root`` (its ``trustedFolders.json``, or ``GEMINI_CLI_TRUST_WORKSPACE``);
    None when the file cannot be read. A folder is trusted when it or a folder above it is."""
    if os.environ.get("GEMINI_CLI_TRUST_WORKSPACE", "").lower() == "true":
        return True
    home = Path(os.environ.get("GEMINI_CLI_HOME") or Path.home())
    try:
        rules = json.loads((home / ".gemini" / "trustedFolders.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        return False
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(rules, dict):
        return None
    here = {root, root.resolve(), *root.parents, *root.resolve().parents}
    return any(_TRUSTS[level](Path(key)) in here for key, level in rules.items() if level in _TRUSTS)


def _ensure(value: dict[str, Any]) -> None:
    base.ensure_claude_hooks(value, ENTRIES, SETTINGS)
    base.ensure_mcp(value, dict(base.MCP_SERVER), SETTINGS)


def _drop(value: dict[str, Any]) -> None:
    base.drop_claude_hooks(value)
    base.drop_mcp(value)


def targets() -> list[base.Target]:
    return [base.json_target(NAME, SETTINGS, ("hooks", "mcp"), _ensure, _drop,
                             lambda v: base.has_claude_hooks(v, ENTRIES) and base.has_mcp(v))]
