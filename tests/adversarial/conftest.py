"""The anchored team fixture of tests/anchor, for attacks on obligations and the anchor's authority."""

from tests.anchor.conftest import team  # noqa: F401  (fixture)
