"""Cursor: ``.cursor/hooks.json`` (version 1); camelCase hooks, ``workspace_roots`` instead of ``cwd``.

Less certain than Claude and Codex: the assumptions are this module and its recorded payloads. We register
no ``before*`` hook: Cursor's no-opinion there is an ``allow`` object, which we never want to print. At
``stop`` Cursor offers only ``followup_message``, which it submits as the next *user* message: gitive never
answers there. ``sessionStart`` is fire-and-forget (Cursor does not wait for it), so lessons may go there but
messages, which are acknowledged as delivered, wait for the next ``postToolUse``. Cursor documents no size
cap for ``additional_context``: gitive keeps it under Codex's, 8,000 UTF-8 bytes.
"""

from __future__ import annotations

import json

from gitive.capture.adapters.base import NO_OPINION, Adapter, first_str

# typing costs each hook process about 5 ms to import; with postponed annotations it is needed only by checkers
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

NAME = "cursor"
HOOKS = {"session-start": "sessionStart", "post-tool": "postToolUse", "stop": "stop"}
CONTEXT = frozenset({"session-start", "post-tool"})
CAP = 8_000


def reply(event: str, context: str | None, payload: dict[str, Any]) -> str:
    if not context or event not in CONTEXT:
        return NO_OPINION
    return json.dumps({"additional_context": context})


def _cwd(payload: dict[str, Any]) -> str | None:
    roots = payload.get("workspace_roots")
    if isinstance(roots, list) and roots and isinstance(roots[0], str):
        return roots[0]
    return first_str(payload, "cwd")


ADAPTER = Adapter(
    name=NAME,
    hooks=HOOKS,
    session_key=lambda p: first_str(p, "conversation_id", "session_id"),
    cwd_key=_cwd,
    reply=reply,
    context=CONTEXT,
    mail=frozenset({"post-tool"}),
    cap=CAP,
    tool_fields=("tool_name", "tool_input", "tool_output"),
)
