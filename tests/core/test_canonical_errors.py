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
