"""The anchored team fixtures of tests/anchor, for attacks on obligations and the anchor's authority."""

from tests.anchor.conftest import anchored_template, team  # noqa: F401  (fixtures)
