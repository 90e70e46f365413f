"""GITIVE_HOME and the one clock."""

from __future__ import annotations

import stat
import time
from pathlib import Path

import pytest

from gitive.core import clock, home


def test_gitive_home_follows_the_environment(gitive_home: Path) -> None:
    assert home.gitive_home() == gitive_home


def test_gitive_home_defaults_to_dot_gitive_in_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("GITIVE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert home.gitive_home() == tmp_path / ".gitive"


def test_gitive_home_expands_a_tilde(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("GITIVE_HOME", "~/elsewhere")
    assert home.gitive_home() == tmp_path / "elsewhere"


def test_ensure_home_creates_a_private_directory(gitive_home: Path) -> None:
    assert home.ensure_home() == gitive_home
    assert stat.S_IMODE(gitive_home.stat().st_mode) == 0o700
    assert home.ensure_home() == gitive_home  # idempotent


def test_now_ms_is_the_wall_clock_in_milliseconds() -> None:
    before = time.time_ns() // 1_000_000
    now = clock.now_ms()
    assert before <= now <= time.time_ns() // 1_000_000
    assert isinstance(now, int)


def test_now_ms_can_be_fixed_for_tests(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITIVE_NOW_MS", "1700000000123")
    assert clock.now_ms() == 1_700_000_000_123
