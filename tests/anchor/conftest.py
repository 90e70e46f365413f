"""A team with an anchor (alice, bob, the anchor machine) built once per test process and restored in place
for each test (``testing.teams``), with the paths and project id a new founding would have."""

from __future__ import annotations

import pytest

from testing import anchor as anchoring
from testing import teams


@pytest.fixture
def team(place: teams.Place) -> anchoring.AnchoredTeam:
    return anchoring.restored(place)
