"""ULIDs for message ids (the anchor writes messages too, so the maker lives in ``gitive/core/ulid.py``)."""

from gitive.core.ulid import new_ulid

__all__ = ["new_ulid"]
