"""JSON Schemas for the tools' inputs and outputs, the one checker both go through, and text made safe to parse.

Standard library only: the stdio front (:mod:`gitive.mcp.front`) lists the tools from these schemas before the
SDK has loaded, and the server checks every call's arguments and every structured result with :func:`check`.
The checker knows the part of JSON Schema the tool table uses (``type``, ``enum``, ``minLength``/``maxLength``,
``minimum``/``maximum``, ``items``/``maxItems``, ``properties``/``required``/``additionalProperties``) and
answers with one short line that never quotes more than a few dozen characters of the value (an argument may
be a megabyte). The tests hold it to the ``jsonschema`` library on generated values.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

Schema = dict[str, Any]
QUOTE = 40  # characters of a wrong value quoted back in an error
_SURROGATE = re.compile("[\ud800-\udfff]")


def text(description: str, max_length: int, *, min_length: int = 0, enum: tuple[str, ...] = (),
         default: str | None = None) -> Schema:
    """A string argument or field, always with its longest length."""
    out: Schema = {"type": "string", "description": description, "maxLength": max_length}
    if min_length:
        out["minLength"] = min_length
    if enum:
        out["enum"] = list(enum)
    if default is not None:
        out["default"] = default
    return out


def integer(description: str, minimum: int, maximum: int | None = None, default: int | None = None) -> Schema:
    out: Schema = {"type": "integer", "description": description, "minimum": minimum}
    if maximum is not None:
        out["maximum"] = maximum
    if default is not None:
        out["default"] = default
    return out


def boolean(description: str, default: bool = False) -> Schema:
    return {"type": "boolean", "description": description, "default": default}


def array(items: Schema, description: str, max_items: int, *, min_items: int = 0) -> Schema:
    out: Schema = {"type": "array", "description": description, "items": items, "maxItems": max_items}
    if min_items:
        out["minItems"] = min_items
    return out


def arguments(required: tuple[str, ...] = (), **props: Schema) -> Schema:
    """A tool's input schema: these arguments and no others."""
    out: Schema = {"type": "object", "properties": props, "additionalProperties": False}
    if required:
        out["required"] = list(required)
    return out


def shape(optional: tuple[str, ...] = (), **props: Any) -> Schema:
    """An output object: every field listed is required except ``optional``; a field's value is a schema or a
    type name (``"string"``, ``"string|null"``, …). Further fields are allowed (clients must ignore them)."""
    fields = {name: _field(value) for name, value in props.items()}
    return {"type": "object", "properties": fields, "required": [n for n in fields if n not in optional]}


def _field(value: Any) -> Schema:
    if isinstance(value, dict):
        return value
    types = value.split("|")
    return {"type": types[0] if len(types) == 1 else types}


def listing(items: Any) -> Schema:
    """An output array of ``items`` (a schema or a type name)."""
    return {"type": "array", "items": _field(items)}


def nullable(schema: Schema) -> Schema:
    """``schema`` or null (an object's ``type`` becomes ``["object", "null"]``)."""
    kind = schema.get("type", "object")
    return {**schema, "type": [*(kind if isinstance(kind, list) else [kind]), "null"]}


def check(schema: Mapping[str, Any], value: Any, where: str = "") -> str | None:
    """The first way ``value`` breaks ``schema``, as one line naming where (None: it conforms)."""
    kinds = schema.get("type")
    if kinds is not None:
        allowed = kinds if isinstance(kinds, list) else [kinds]
        if not any(_is(kind, value) for kind in allowed):
            return f"{where or 'the value'} must be {' or '.join(_NAMES[k] for k in allowed)}, not {_kind(value)}"
    if "enum" in schema and value not in schema["enum"]:
        return f"{where or 'the value'} must be one of {', '.join(map(str, schema['enum']))}, not {_quote(value)}"
    if isinstance(value, str):
        return _check_text(schema, value, where)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _check_number(schema, value, where)
    if isinstance(value, list):
        return _check_list(schema, value, where)
    if isinstance(value, dict):
        return _check_object(schema, value, where)
    return None


def _check_text(schema: Mapping[str, Any], value: str, where: str) -> str | None:
    name = where or "the text"
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        return f"{name} is {len(value):,} characters; at most {schema['maxLength']:,}"
    if len(value) < schema.get("minLength", 0):
        return f"{name} must not be empty" if schema["minLength"] == 1 else \
            f"{name} needs at least {schema['minLength']} characters"
    return None


def _check_number(schema: Mapping[str, Any], value: float, where: str) -> str | None:
    name = where or "the number"
    if "minimum" in schema and value < schema["minimum"]:
        return f"{name} must be at least {schema['minimum']}, not {_quote(value)}"
    if "maximum" in schema and value > schema["maximum"]:
        return f"{name} must be at most {schema['maximum']}, not {_quote(value)}"
    return None


def _check_list(schema: Mapping[str, Any], value: list[Any], where: str) -> str | None:
    name = where or "the list"
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        return f"{name} has {len(value):,} items; at most {schema['maxItems']}"
    if len(value) < schema.get("minItems", 0):
        return f"{name} needs at least {schema['minItems']} item{'s' if schema['minItems'] != 1 else ''}"
    items = schema.get("items")
    for n, item in enumerate(value if isinstance(items, Mapping) else []):
        problem = check(items, item, f"{name}[{n}]")
        if problem:
            return problem
    return None


def _check_object(schema: Mapping[str, Any], value: dict[str, Any], where: str) -> str | None:
    props: Mapping[str, Any] = schema.get("properties", {})
    for key in schema.get("required", []):
        if key not in value:
            return f"{_join(where, key)} is missing"
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        if key in props:
            problem = check(props[key], item, _join(where, key))
        elif extra is False:
            import difflib  # only for a misspelled argument

            near = difflib.get_close_matches(key, list(props), n=1)
            hint = f" (did you mean {near[0]}?)" if near else f" (known: {', '.join(props) or 'none'})"
            return f"unknown argument {_quote(key)}{hint}" if not where else f"{where} has no field {_quote(key)}"
        elif isinstance(extra, Mapping):
            problem = check(extra, item, _join(where, key))
        else:
            problem = None
        if problem:
            return problem
    return None


_NAMES = {"string": "a string", "integer": "an integer", "number": "a number", "boolean": "true or false",
          "array": "a list", "object": "an object", "null": "null"}


def _is(kind: str, value: Any) -> bool:
    match kind:
        case "string":
            return isinstance(value, str)
        case "integer":
            return (isinstance(value, int) and not isinstance(value, bool)) or (
                isinstance(value, float) and value.is_integer())
        case "number":
            return isinstance(value, int | float) and not isinstance(value, bool)
        case "boolean":
            return isinstance(value, bool)
        case "array":
            return isinstance(value, list)
        case "object":
            return isinstance(value, dict)
        case "null":
            return value is None
    return False


def _kind(value: Any) -> str:
    for kind in ("boolean", "null", "integer", "number", "string", "array", "object"):
        if _is(kind, value):
            return f"{_NAMES[kind]} ({_quote(value)})" if kind in ("integer", "number", "string") else _NAMES[kind]
    return type(value).__name__


def _quote(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= QUOTE else shown[: QUOTE - 1] + "…"


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def clean(value: Any) -> Any:
    """``value`` (parsed JSON) with every lone surrogate in its strings and keys replaced by U+FFFD.

    ``json.loads`` accepts ``"\\ud800"`` and gives a string that cannot be encoded as UTF-8; the SDK's reader
    refuses the whole line, so the call would never be answered. Paired surrogates were already joined by the
    parser, so any surrogate left is lone.
    """
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value) if _SURROGATE.search(value) else value
    if isinstance(value, list):
        return [clean(item) for item in value]
    if isinstance(value, dict):
        return {clean(key): clean(item) for key, item in value.items()}
    return value
