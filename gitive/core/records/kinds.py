"""Every record kind in one table, gathered from the family modules, with the size caps of their fields.

A new kind goes in its family's module (or a new family module listed in ``_FAMILIES``); this module only joins
them, adds the decision stamp to every decision kind, and says which cap a field gets.
"""

from __future__ import annotations

from gitive.core import decisions
from gitive.core.records import gate, lessons, mail, obligations, prepared, projects, roster, screening
from gitive.core.records import sealed as sealed_scopes

_FAMILIES = (roster, lessons, mail, projects, obligations, gate, screening, prepared, sealed_scopes)

# kind -> field -> (type, required); "machine" and "name" are checked beyond their type.
FIELDS: dict[str, dict[str, tuple[str, bool]]] = {}
for _family in _FAMILIES:
    assert not set(_family.FIELDS) & set(FIELDS), f"{_family.__name__} defines a kind another family has"
    FIELDS.update(_family.FIELDS)

# Every decision kind carries its own signed time and place (gitive/core/decisions.py), optional so that
# records of decision format v1 still read.
for _kind in decisions.KINDS:
    FIELDS[_kind][decisions.FIELD] = ("decided", False)

KINDS = tuple(FIELDS)

# Size caps (v2 entries, and every record at write time): each field is capped by its type, in UTF-8 bytes for
# strings and canonical JSON bytes for lists and objects, unless an override names the field. Types not listed
# here (ids, names, enums, booleans) are bounded by their own check; integers by MAX_INT. A new field gets its
# type's cap without a line here; give it an override only when its type's cap does not fit (in the family's
# ``CAPS``).
TYPE_CAPS: dict[str, int] = {"str": 1024, "list": 16 * 1024, "dict": 4 * 1024}
FIELD_CAPS: dict[tuple[str, str], int] = {}
for _family in _FAMILIES:
    FIELD_CAPS.update(_family.CAPS)


def field_cap(kind: str, name: str, ftype: str) -> int | None:
    """The size cap of ``kind``'s field ``name`` of type ``ftype`` (None: bounded by its type check)."""
    return FIELD_CAPS.get((kind, name), TYPE_CAPS.get(ftype))
