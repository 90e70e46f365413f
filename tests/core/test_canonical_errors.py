"""What a refused record says (the one line a user sees): the float or constant it held."""

from __future__ import annotations

import pytest

from gitive.core import canonical
from gitive.errors import InvalidRecord


@pytest.mark.parametrize("read", [canonical.loads, canonical.loads_canonical])
def test_a_float_is_named_in_the_refusal(read: object) -> None:
    with pytest.raises(InvalidRecord, match=r"float '1\.5' in a record"):
        read(b'{"a":1.5}')  # type: ignore[operator]


@pytest.mark.parametrize("read", [canonical.loads, canonical.loads_canonical])
def test_a_constant_is_named_in_the_refusal(read: object) -> None:
    with pytest.raises(InvalidRecord, match=r"^NaN in a record$"):
        read(b'{"a":NaN}')  # type: ignore[operator]


@pytest.mark.parametrize("write", [canonical.dumps, canonical.dumps_trusted])
def test_a_lone_surrogate_is_refused_with_its_reason(write: object) -> None:
    with pytest.raises(InvalidRecord, match=r"^a record holds a lone surrogate, which is not valid UTF-8$"):
        write({"a": "\ud800"})  # type: ignore[operator]


def test_duplicate_keys_and_other_forms_are_refused_with_their_reason() -> None:
    with pytest.raises(InvalidRecord, match=r"^duplicate key in a record$"):
        canonical.loads(b'{"a":1,"a":2}')
    with pytest.raises(InvalidRecord, match=r"^not in canonical form \(sorted keys, no white space"):
        canonical.loads_canonical(b'{"b":1,"a":2}')
    with pytest.raises(InvalidRecord, match=r"^not valid JSON: "):
        canonical.loads_canonical(b'{"a":')
    with pytest.raises(InvalidRecord, match=r"^\$\.x: set cannot be stored in a record$"):
        canonical.dumps({"x": {1}})
