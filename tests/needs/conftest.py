"""A team where one of each thing needs alice (``testing.needs``), built once per test process and restored in
place for each test (``testing.teams``)."""

from __future__ import annotations

from typing import Any

import pytest

from testing import anchor as anchoring
from testing import needs, teams
from tests.ui.conftest import browser, serve  # noqa: F401 - the dashboard's fixtures: a real gitive ui, Chromium


@pytest.fixture
def needy(place: teams.Place) -> tuple[anchoring.AnchoredTeam, dict[str, Any]]:
    """A fresh restore of that team, and the ids of what needs alice, by kind."""
    return anchoring.known(place.restore("needs", needs.build)), place.made["needs"]
