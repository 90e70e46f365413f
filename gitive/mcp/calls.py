"""One tool call, start to answer: arguments checked against the tool's schema, its handler run, the result
checked against its output schema, and every failure turned into one line the model can act on.

No SDK here (the server wraps an :class:`Answer` in the SDK's result type), so all of it is testable and usable
without the 0.7 s the SDK takes to import. Handlers are plain functions that may take seconds (git, the index),
so the server runs :func:`run` on a worker thread.
"""

from __future__ import annotations

import importlib
import json
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from gitive.mcp.schema import check, clean
from gitive.mcp.table import Tool

MAX_ERROR = 300  # characters of an error line


class Answer(NamedTuple):
    """What a call gives back: the model's text, the structured result (None on an error), and whether it failed."""

    text: str
    data: dict[str, Any] | None
    is_error: bool


def run(tool: Tool, repo: Path | str | None, given: dict[str, Any] | None) -> Answer:
    """Call ``tool`` with the arguments a client sent; never raises for anything the call or its data does."""
    args, problem = prepare(tool, given)
    if problem:
        return failure(f"{tool.name}: {problem}")
    try:
        found = handler(tool.call)(repo, **args)
    except Exception as exc:  # a tool's failure is the model's to read, never the connection's end
        return failure(_explain(tool, exc))
    problem = check(tool.output, found)
    if problem:  # a bug of ours: say so, and never send data that breaks the declared schema
        print(f"gitive mcp: {tool.name} returned a result outside its output schema: {problem}", file=sys.stderr)
        return failure(f"{tool.name} failed: its result did not match its declared schema (a gitive bug; the "
                       "server's log has the detail)")
    text = handler(tool.text)(found) if tool.text else json.dumps(found, ensure_ascii=False)
    return Answer(text, found, False)


def prepare(tool: Tool, given: dict[str, Any] | None) -> tuple[dict[str, Any], str | None]:
    """The arguments to call with (defaults filled in, whole-number floats as ints), or the one-line reason
    they are refused. A null for an optional argument means "not given"."""
    if given is not None and not isinstance(given, dict):
        return {}, "arguments must be an object"
    props: dict[str, Any] = tool.inputs["properties"]
    needed = set(tool.inputs.get("required", ()))
    args = {k: v for k, v in clean(given or {}).items() if v is not None or k in needed}
    for name, what in tool.ids:  # an id longer than any id is no id here, as the CLI says of one
        value = args.get(name)
        if isinstance(value, str) and len(value) > props[name]["maxLength"]:
            return {}, f"no {what} {value[:12]!r}… here ({name} is {len(value):,} characters; ids are at most " \
                       f"{props[name]['maxLength']})"
    problem = check(tool.inputs, args)
    if problem:
        return {}, problem
    for name, schema in props.items():
        if name not in args and "default" in schema:
            args[name] = schema["default"]
        elif schema.get("type") == "integer" and isinstance(args.get(name), float):
            args[name] = int(args[name])
    return args, None


def failure(line: str) -> Answer:
    """An error the model reads: one line, defanged, at most :data:`MAX_ERROR` characters."""
    from gitive.capture.framing import defang

    flat = " ".join(defang(line).split())
    return Answer(flat if len(flat) <= MAX_ERROR else flat[: MAX_ERROR - 1] + "…", None, True)


def _explain(tool: Tool, exc: Exception) -> str:
    from gitive.errors import GitiveError

    if isinstance(exc, GitiveError):
        return str(exc)
    traceback.print_exception(exc, file=sys.stderr)  # the harness's MCP log keeps the detail
    detail = " ".join(str(exc).split())[:120]
    return f"{tool.name} failed: {type(exc).__name__}{': ' + detail if detail else ''} (the server's log has more)"


def handler(name: str) -> Callable[..., Any]:
    """The function ``"module:function"`` names, imported at its first use."""
    module, _, attr = name.partition(":")
    found: Callable[..., Any] = getattr(importlib.import_module(module), attr)
    return found
