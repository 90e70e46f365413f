"""Canonical JSON: the one byte form of a record that is hashed and signed.

UTF-8, keys sorted, no insignificant white space, integers only. Floats are refused because their
text form differs between implementations, and a signature must cover exactly one byte string.
"""

from __future__ import annotations

import json
from typing import Any

from gitive.errors import InvalidRecord

# No cycle check: dumps() walks every value first (_check), and loads() cannot make a cycle.
_ENCODER = json.JSONEncoder(ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False,
                            check_circular=False)


def _check(value: Any, path: str = "$") -> None:
    if _plain(value):  # the common case, without a path string built for every value
        return
    _check_each(value, path)


_LEAVES = frozenset({str, int, bool, type(None)})
_PLAIN_NODES = 1_000_000  # far above any record (an entry is at most 96 KiB)


def _plain(value: Any) -> bool:
    """True when ``value`` is made of exactly dicts with string keys, lists, strings, integers, booleans and None
    (no subclass: :func:`_check_each` judges those, and words the error). A value of more than
    :data:`_PLAIN_NODES` parts (or a cycle, which never ends) is left to :func:`_check_each` too."""
    stack = [value]
    pop, extend, leaves = stack.pop, stack.extend, _LEAVES
    for _ in range(_PLAIN_NODES):
        if not stack:
            return True
        item = pop()
        kind = type(item)
        if kind in leaves:
            continue
        if kind is dict:
            for key in item:
                if type(key) is not str:
                    return False
            extend(item.values())
        elif kind is list:
            extend(item)
        else:
            return False
    return not stack


def _check_each(value: Any, path: str = "$") -> None:
    if isinstance(value, float):
        raise InvalidRecord(f"{path}: floats are not allowed in records; use integers")
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidRecord(f"{path}: object keys must be strings")
            _check_each(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_each(item, f"{path}[{i}]")
    elif not (value is None or isinstance(value, (str, int, bool))):
        raise InvalidRecord(f"{path}: {type(value).__name__} cannot be stored in a record")


def dumps(value: Any) -> bytes:
    """Return the canonical bytes of ``value``.

    Raises:
        InvalidRecord: ``value`` holds a float or a type JSON cannot carry.
    """
    _check(value)
    try:
        return _ENCODER.encode(value).encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidRecord("a record holds a lone surrogate, which is not valid UTF-8") from None


def dumps_trusted(value: Any) -> bytes:
    """Canonical bytes of a value that came out of :func:`loads` (already checked; the hot read path)."""
    try:
        return _ENCODER.encode(value).encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidRecord("a record holds a lone surrogate, which is not valid UTF-8") from None


def _no_float(text: str) -> Any:
    raise InvalidRecord(f"float {text!r} in a record")


def _no_constant(text: str) -> Any:
    raise InvalidRecord(f"{text} in a record")


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise InvalidRecord("duplicate key in a record")
    return out


def loads(data: bytes | str) -> Any:
    """Parse JSON strictly: no floats, no NaN, no duplicate keys.

    Raises:
        InvalidRecord: the bytes are not strict JSON.
    """
    try:
        return json.loads(
            data,
            parse_float=_no_float,
            parse_constant=_no_constant,
            object_pairs_hook=_unique_keys,
        )
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        if isinstance(exc, InvalidRecord):
            raise
        raise InvalidRecord(f"not valid JSON: {exc}") from None


_STRICT = json.JSONDecoder(parse_float=_no_float, parse_constant=_no_constant)


def loads_canonical(data: bytes) -> Any:
    """Parse bytes that must already be in canonical form (every stored entry is).

    Faster than :func:`loads` on the hot read path: the C parser alone, then one re-encode compared with the
    input, which refuses duplicate keys, white space and unsorted keys in one check.

    Raises:
        InvalidRecord: the bytes are not canonical JSON.
    """
    try:
        value = _STRICT.decode(data.decode("utf-8"))
    except InvalidRecord:
        raise
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError too
        raise InvalidRecord(f"not valid JSON: {exc}") from None
    try:
        again = _ENCODER.encode(value).encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidRecord("a record holds a lone surrogate, which is not valid UTF-8") from None
    if again != data:
        raise InvalidRecord("not in canonical form (sorted keys, no white space, no duplicate keys)")
    return value
