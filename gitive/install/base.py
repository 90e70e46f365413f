"""The shape every install target shares, and the entries gitive owns in harness configuration files.

A :class:`Target` is one file gitive writes into. Our entries are recognised by their content, never by
position: a hook whose command starts with ``gitive-hook `` and an MCP server named ``gitive``. Everything
else in the file belongs to the user and is kept.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from gitive.capture.adapters import ADAPTERS
from gitive.errors import GitiveError
from gitive.install import jsonfile

HOOK_COMMAND = "gitive-hook"
SERVER_NAME = "gitive"
MCP_SERVER: dict[str, Any] = {"command": "gitive", "args": ["mcp"]}
HOOK_TIMEOUT_S = 5


@dataclass(frozen=True)
class Target:
    """One file gitive owns entries in.

    ``add`` returns the content with our entries (the input itself when they are all there) and raises
    :class:`~gitive.errors.GitiveError` when the current content cannot be read; ``remove`` returns the
    content without them and whether nothing is left; ``present`` says whether all of ours are there.
    """

    owner: str  # the harness (or "git-hooks")
    path: str  # relative to the top of the work tree, "/"-separated
    holds: tuple[str, ...]  # "hooks", "mcp"
    add: Callable[[bytes | None], bytes]
    remove: Callable[[bytes], tuple[bytes, bool]]
    present: Callable[[bytes | None], bool]


def command(harness: str, event: str) -> str:
    return f"{HOOK_COMMAND} {harness} {event}"


def is_ours(handler: Any) -> bool:
    return isinstance(handler, dict) and str(handler.get("command", "")).startswith(HOOK_COMMAND + " ")


def json_target(owner: str, path: str, holds: tuple[str, ...], ensure: Callable[[dict[str, Any]], None],
                drop: Callable[[dict[str, Any]], None], has: Callable[[dict[str, Any]], bool]) -> Target:
    """A :class:`Target` over a JSON object file from three functions that edit or inspect the object."""

    def add(data: bytes | None) -> bytes:
        return jsonfile.edit(path, data, ensure)[0]

    def remove(data: bytes) -> tuple[bytes, bool]:
        return jsonfile.edit(path, data, drop)

    def present(data: bytes | None) -> bool:
        try:
            return data is not None and has(jsonfile.load(path, data))
        except GitiveError:
            return False

    return Target(owner, path, holds, add, remove, present)


# --- hooks in Claude's structure: {"hooks": {"<Event>": [{"matcher": ..., "hooks": [{"type": "command", ...}]}]}}

def claude_style_entries(harness: str, matchers: dict[str, str], timeout: int) -> dict[str, tuple[str | None, dict]]:
    """hook name -> (matcher, handler) for every event the harness's adapter registers."""
    return {hook: (matchers.get(hook), {"type": "command", "command": command(harness, event), "timeout": timeout})
            for event, hook in ADAPTERS[harness].hooks.items()}


def ensure_claude_hooks(value: dict[str, Any], entries: dict[str, tuple[str | None, dict]], label: str) -> None:
    """Our handler on every hook, in a group with our matcher; an older entry of ours (another matcher or
    timeout, say, from an earlier gitive) is replaced, the user's own are left as they are."""
    hooks = jsonfile.child(value, "hooks", dict, label)
    _drop_claude_hooks(hooks, keep=set(entries))  # ours on events we no longer register
    for hook, (matcher, handler) in entries.items():
        groups = jsonfile.child(hooks, hook, list, label)
        if any(_is_current(g, matcher, handler) for g in groups):
            continue
        _drop_groups(groups)
        groups.append({"matcher": matcher, "hooks": [handler]} if matcher is not None else {"hooks": [handler]})


def _is_current(group: Any, matcher: str | None, handler: dict[str, Any]) -> bool:
    return (isinstance(group, dict) and group.get("matcher") == matcher and isinstance(group.get("hooks"), list)
            and handler in group["hooks"])


def drop_claude_hooks(value: dict[str, Any]) -> None:
    hooks = value.get("hooks")
    if isinstance(hooks, dict) and hooks:
        _drop_claude_hooks(hooks, keep=set())
        if not hooks:
            del value["hooks"]


def has_claude_hooks(value: dict[str, Any], entries: dict[str, tuple[str | None, dict]]) -> bool:
    """Whether every entry of ours is there as this gitive writes it (an outdated one does not count)."""
    hooks = value.get("hooks")
    return isinstance(hooks, dict) and all(
        isinstance(hooks.get(hook), list) and any(_is_current(g, matcher, h) for g in hooks[hook])
        for hook, (matcher, h) in entries.items())


def _drop_groups(groups: list[Any]) -> bool:
    """Remove our handlers from ``groups`` (and groups they leave empty); true if anything was removed."""
    changed = False
    for group in list(groups):
        inner = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(inner, list) or not any(is_ours(h) for h in inner):
            continue
        changed = True
        kept = [h for h in inner if not is_ours(h)]
        if kept:
            group["hooks"] = kept
        else:
            groups.remove(group)
    return changed


def _drop_claude_hooks(hooks: dict[str, Any], keep: set[str]) -> None:
    for hook in [h for h in hooks if h not in keep]:
        groups = hooks[hook]
        if isinstance(groups, list) and _drop_groups(groups) and not groups:
            del hooks[hook]


# --- MCP servers: {"mcpServers": {"gitive": {...}}}

def ensure_mcp(value: dict[str, Any], server: dict[str, Any], label: str) -> None:
    servers = jsonfile.child(value, "mcpServers", dict, label)
    # An existing "gitive" entry is kept as it is: a teammate may point it at their own install.
    servers.setdefault(SERVER_NAME, server)


def drop_mcp(value: dict[str, Any]) -> None:
    servers = value.get("mcpServers")
    if isinstance(servers, dict) and SERVER_NAME in servers:
        del servers[SERVER_NAME]
        if not servers:
            del value["mcpServers"]


def has_mcp(value: dict[str, Any]) -> bool:
    servers = value.get("mcpServers")
    return isinstance(servers, dict) and SERVER_NAME in servers


def mcp_target(owner: str, path: str, server: dict[str, Any]) -> Target:
    return json_target(owner, path, ("mcp",), lambda v: ensure_mcp(v, server, path), drop_mcp, has_mcp)
