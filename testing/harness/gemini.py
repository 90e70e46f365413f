"""Gemini CLI (``gemini -p``) against the scripted model: ``generateContent`` (streamed as SSE).

Pointed at the server by ``GOOGLE_GEMINI_BASE_URL`` with a test key, authenticated by API key
(``security.auth.selectedType = "gemini-api-key"`` in the test's own ``~/.gemini/settings.json``), with
telemetry, usage statistics and update checks off. Headless in a folder it does not trust, Gemini exits 55
before any hook or MCP call; the test trusts the clone as a user does once, in ``~/.gemini/trustedFolders.json``
(``TRUST_FOLDER``), not by ``GEMINI_CLI_TRUST_WORKSPACE``. Project hooks and MCP servers come from the
clone's ``.gemini/settings.json``, as ``gitive install`` writes it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from testing.harness import run
from testing.harness.server import ModelServer

NAME = "gemini"
MODEL = "gemini-2.5-flash"


def user_settings() -> dict[str, object]:
    return {"security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": True}},
            "telemetry": {"enabled": False}, "privacy": {"usageStatisticsEnabled": False},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
            "model": {"name": MODEL}}


def prepare_home(home: Path, repo: Path, trusted: bool = True) -> None:
    folder = home / ".gemini"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(json.dumps(user_settings(), indent=2))
    trust = {str(p): "TRUST_FOLDER" for p in dict.fromkeys([repo, repo.resolve()])} if trusted else {}
    (folder / "trustedFolders.json").write_text(json.dumps(trust, indent=2))


def env(model: ModelServer, home: Path, gitive_home: Path | None, extra: Mapping[str, str] | None = None,
        budget: str | None = run.GENEROUS_BUDGET_MS) -> dict[str, str]:
    values = {"GOOGLE_GEMINI_BASE_URL": model.url, "GEMINI_API_KEY": "scripted-test-key",
              "GEMINI_CLI_NO_RELAUNCH": "true", **(extra or {})}
    return run.base_env(home, gitive_home, values, budget)


def session(model: ModelServer, repo: Path, home: Path, gitive_home: Path | None, prompt: str, *,
            trusted: bool = True, extra_env: Mapping[str, str] | None = None, timeout: float = 180,
            budget: str | None = run.GENEROUS_BUDGET_MS) -> run.Run:
    """One ``gemini -p`` in ``repo``; the script is whatever ``model.script`` is."""
    prepare_home(home, repo, trusted)
    command = [run.binary(NAME), "-p", prompt, "--output-format", "json", "--yolo"]
    return run.execute(NAME, command, repo, env(model, home, gitive_home, extra_env, budget), model, timeout)
