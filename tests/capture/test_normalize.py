"""Every recorded payload normalized in-process: who, where, which files with which op, which command and how
it ended (the subprocess tests in ``test_hook.py`` check what the hook answers; these check what it records)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gitive.capture import normalize
from gitive.capture.adapters import ADAPTERS, EVENTS

from .support import FIXTURES, payload

SESSIONS = {"claude": "8f3c1a52-6b0e-4d7a-9c41-2f5e8b7d1a90", "codex": "019a4f2e-7c1d-7b3a-9e55-4d2c8a61f0b7",
            "cursor": "c1d5e7a3-2b4f-4e6a-8c0d-9f1e3a5b7c9d", "gemini": "4e9b2d71-3a6c-4f8e-b1d5-7c0a2e4f6b8d"}
# fixture -> (our event, file paths, op, command, exit code)
EXPECTED: dict[str, tuple[str, list[str] | None, str | None, str | None, int | None]] = {
    "claude/session-start": ("session-start", None, None, None, None),
    "claude/prompt": ("prompt", None, None, None, None),
    "claude/post-tool-edit": ("post-tool", ["src/app/settings.py"], "modify", None, None),
    "claude/post-tool-write": ("post-tool", ["src/app/cache.py"], "modify", None, None),
    "claude/post-tool-read": ("post-tool", ["src/app/views.py"], "read", None, None),
    "claude/post-tool-bash-ok": ("post-tool", None, None, "git status --short", None),
    "claude/post-tool-bash-cite": ("post-tool", None, None, "gitive lessons show 0123456789ab", None),
    "claude/post-tool-failure": ("post-tool-failure", None, None, "alembic upgrade head", 1),
    "claude/stop": ("stop", None, None, None, None),
    "claude/stop-active": ("stop", None, None, None, None),
    "claude/session-end": ("session-end", None, None, None, None),
    "codex/session-start": ("session-start", None, None, None, None),
    "codex/prompt": ("prompt", None, None, None, None),
    "codex/post-tool-apply-patch": ("post-tool", ["src/app/settings.py"], "modify", None, None),
    "codex/post-tool-bash-failed": ("post-tool", None, None, "alembic upgrade head", 1),
    "codex/post-tool-bash-ok": ("post-tool", None, None, "ls src", 0),
    "codex/post-tool-bash-segfault": ("post-tool", None, None, "python -m quux.run", 139),
    "codex/stop": ("stop", None, None, None, None),
    "cursor/session-start": ("session-start", None, None, None, None),
    "cursor/post-tool-write": ("post-tool", ["src/app/settings.py"], "modify", None, None),
    "cursor/post-tool-shell-failed": ("post-tool", None, None, "alembic upgrade head", 1),
    "cursor/post-tool-shell-ok": ("post-tool", None, None, "ls src", 0),
    "cursor/stop": ("stop", None, None, None, None),
    "gemini/session-start": ("session-start", None, None, None, None),
    "gemini/prompt": ("prompt", None, None, None, None),
    "gemini/post-tool-replace": ("post-tool", ["src/app/settings.py"], "modify", None, None),
    "gemini/post-tool-shell-failed": ("post-tool", None, None, "alembic upgrade head", 1),
    "gemini/session-end": ("session-end", None, None, None, None),
}


def test_every_recorded_payload_is_listed() -> None:
    recorded = {f"{p.parent.name}/{p.stem}" for p in FIXTURES.glob("*/*.json")}
    assert recorded == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_recorded_payload_normalizes(name: str, tmp_path: Path) -> None:
    harness, stem = name.split("/")
    kind, paths, op, command, exit_code = EXPECTED[name]
    repo = tmp_path / "shop"
    body = payload(harness, stem, repo, transcript="/nowhere", lesson="0123456789ab")
    event: dict[str, Any] = normalize.event_for(ADAPTERS[harness], kind, body, repo)
    assert event["event"]["action"] == normalize.ACTIONS[kind]
    assert event["harness"] == {"name": harness}
    assert event["session"] == {"id": SESSIONS[harness], "working_directory": str(repo)}
    assert event["vcs"] == {"repository": str(repo)}
    assert event.get("file") == ({"paths": paths, "op": op} if paths else None)
    assert (event.get("command") or {}).get("command") == command or stem == "post-tool-apply-patch"
    assert (event.get("command") or {}).get("exit_code") == exit_code
    if kind == "post-tool":
        assert event["tool"]["name"] == body["tool_name"]
        assert event["tool"]["call_id"] == body.get("tool_use_id")


def test_every_adapter_names_hooks_only_for_our_events() -> None:
    for adapter in ADAPTERS.values():
        assert set(adapter.hooks) <= set(EVENTS) == set(normalize.ACTIONS)
        # No hook before a tool call or a permission: there a no-opinion reply can read as pre-approval.
        # Gemini's BeforeAgent fires at the prompt, before planning, and its reply can only add context or
        # end the turn (gitive never says "decision"): its prompt-time recall, like UserPromptSubmit.
        assert not any(h.lower().startswith(("pre", "before")) and h != "BeforeAgent"
                       for h in adapter.hooks.values())


@pytest.mark.parametrize(("path", "expected"), [
    ("src/a.py", "src/a.py"), ("./src/a.py", "src/a.py"), ("{root}/src/a.py", "src/a.py"),
    ("{root}/../elsewhere/a.py", "{root}/../elsewhere/a.py"), ("/etc/hosts", "/etc/hosts"),
])
def test_paths_are_relative_to_the_repository(tmp_path: Path, path: str, expected: str) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    fill = {"root": str(root), "root_parent": str(tmp_path)}
    assert normalize.relative(path.format(**fill), root) == expected.format(**fill)


@pytest.mark.parametrize(("tail", "expected"), [("", 1), ("note: child exited with code 3\n", 1)])
def test_codex_exit_code_survives_long_output(tail: str, expected: int) -> None:
    output = "".join(f"tests/test_{n}.py::test_case PASSED\n" for n in range(100)) + "FAILED tests/test_z.py\n"
    body = {"session_id": "s", "cwd": "/repo", "tool_name": "Bash", "tool_use_id": "call_1",
            "tool_input": {"command": "pytest"},
            "tool_response": f"Exit code: 1\nWall time: 3.1 seconds\nOutput:\n{output}{tail}"}
    event = normalize.event_for(ADAPTERS["codex"], "post-tool", body, None)
    assert event["command"]["exit_code"] == expected
