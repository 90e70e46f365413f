"""Codex CLI (``codex exec``) against the scripted model: the OpenAI Responses API with SSE.

Everything Codex needs is set in the test's own ``$CODEX_HOME/config.toml``, as a user would set it once:

- a model provider whose ``base_url`` is the scripted server (``wire_api = "responses"``);
- the repository as a trusted project (``[projects."<clone>"] trust_level = "trusted"``): Codex reads a
  project's ``.codex/`` (gitive's hooks and MCP table) only in a trusted project;
- gitive's MCP server marked ``required = true`` (``[mcp_servers.gitive]`` in the project file stays as
  ``gitive install`` wrote it; this layer adds the one key): ``codex exec`` does not wait for an MCP server
  that is not required, so its tools would be missing from the first request.

Codex runs project hooks only once a person has reviewed them in ``/hooks`` (trust is kept per hash of each
entry); a headless test cannot press that key, so it passes ``--dangerously-bypass-hook-trust``, which runs the
enabled hooks for this invocation only. Without it the hooks do not run and Codex says nothing
(tests/harness/test_codex.py checks that too).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from testing.harness import run
from testing.harness.server import ModelServer

NAME = "codex"
MODEL = "gpt-5.1-codex"


def config(model: ModelServer, repo: Path, *, trusted: bool = True, required: bool = True) -> str:
    """The user-level ``config.toml`` of one test run."""
    lines = [f'model = "{MODEL}"', 'model_provider = "scripted"', 'approval_policy = "never"',
             'sandbox_mode = "danger-full-access"', "check_for_update_on_startup = false", "",
             "[model_providers.scripted]", 'name = "scripted"', f'base_url = "{model.url}/v1"',
             'wire_api = "responses"', 'env_key = "OPENAI_API_KEY"', "request_max_retries = 0",
             "stream_max_retries = 0", ""]
    if trusted:
        for path in dict.fromkeys([str(repo), str(repo.resolve())]):
            lines += [f'[projects."{path}"]', 'trust_level = "trusted"', ""]
    if required:
        lines += ["[mcp_servers.gitive]", 'command = "gitive"', 'args = ["mcp"]', "required = true",
                  "startup_timeout_sec = 30", ""]
    return "\n".join(lines)


def env(model: ModelServer, home: Path, gitive_home: Path | None, extra: Mapping[str, str] | None = None,
        budget: str | None = run.GENEROUS_BUDGET_MS) -> dict[str, str]:
    values = {"CODEX_HOME": str(home / ".codex"), "OPENAI_API_KEY": "sk-scripted-test",
              "CODEX_DISABLE_TELEMETRY": "1", "RUST_LOG": "error", **(extra or {})}
    return run.base_env(home, gitive_home, values, budget)


def command(prompt: str, *, bypass_hook_trust: bool = True, args: Sequence[str] = ()) -> list[str]:
    return [run.binary(NAME), "exec", "--skip-git-repo-check", "--json",
            *(["--dangerously-bypass-hook-trust"] if bypass_hook_trust else []), *args, prompt]


def session(model: ModelServer, repo: Path, home: Path, gitive_home: Path | None, prompt: str, *,
            trusted: bool = True, required: bool = True, bypass_hook_trust: bool = True,
            extra_env: Mapping[str, str] | None = None, timeout: float = 180,
            budget: str | None = run.GENEROUS_BUDGET_MS) -> run.Run:
    """One ``codex exec`` in ``repo``; the script is whatever ``model.script`` is."""
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True, exist_ok=True)
    (codex_home / "config.toml").write_text(config(model, repo, trusted=trusted, required=required))
    return run.execute(NAME, command(prompt, bypass_hook_trust=bypass_hook_trust), repo,
                       env(model, home, gitive_home, extra_env, budget), model, timeout)
