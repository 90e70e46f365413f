"""JSON configuration files edited in place: read (refusing what is not a JSON object), change, write back
in the file's own indentation, and leave the bytes alone when nothing changed."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from typing import Any

from gitive.errors import GitiveError

_INDENT = re.compile(rb"\n([ \t]+)\S")


def load(label: str, data: bytes | None) -> dict[str, Any]:
    """The JSON object in ``data`` (``{}`` for a missing or blank file).

    Raises:
        GitiveError: ``data`` is not a JSON object; the message names ``label`` and says nothing was written.
    """
    if data is None or not data.strip():
        return {}
    try:
        value = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise GitiveError(f"{label} is not valid JSON ({exc}); fix it or move it away, then run "
                          "`gitive install` again (nothing was written)") from None
    if not isinstance(value, dict):
        raise GitiveError(f"{label} holds a JSON {type(value).__name__}, not an object; fix it or move it away, "
                          "then run `gitive install` again (nothing was written)")
    return value


def dump(value: dict[str, Any], like: bytes | None) -> bytes:
    """``value`` as JSON indented like ``like`` (2 spaces for a new file), ending as ``like`` ends."""
    indent: int | str = 2
    if like is not None and (m := _INDENT.search(like)):
        unit = m.group(1).decode()
        indent = "\t" if unit.startswith("\t") else len(unit)
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    newline = like is None or not like.strip() or like.endswith(b"\n")
    return (text + ("\n" if newline else "")).encode("utf-8")


def edit(label: str, data: bytes | None, change: Callable[[dict[str, Any]], None]) -> tuple[bytes, bool]:
    """Apply ``change`` to a copy of the object in ``data``.

    Returns:
        ``(bytes, empty)``: ``data`` itself when the object did not change, else the object re-serialised;
        ``empty`` is true when the object is now ``{}``.

    Raises:
        GitiveError: ``data`` is not a JSON object.
    """
    value = load(label, data)
    new = copy.deepcopy(value)
    change(new)
    if new == value and data is not None:
        return data, not new
    return dump(new, data), not new


def child(parent: dict[str, Any], key: str, kind: type, label: str) -> Any:
    """``parent[key]``, created empty if missing.

    Raises:
        GitiveError: it exists with another type (gitive will not guess how to merge into it).
    """
    value = parent.setdefault(key, kind())
    if not isinstance(value, kind):
        raise GitiveError(f"{label}: \"{key}\" is a {type(value).__name__}, expected a JSON "
                          f"{'object' if kind is dict else 'array'}; fix it, then run `gitive install` again "
                          "(nothing was written)")
    return value
