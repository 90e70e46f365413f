"""``gitive install --service --anchor`` on the anchor machine, with a recording stand-in for systemctl."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from testing.anchor import AnchoredTeam
from testing.machines import one_line_error
from tests.install.test_service import FAKE_SYSTEMCTL


@pytest.fixture
def offline_systemd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "user"
    home.mkdir()
    folder = tmp_path / "fake-bin"
    folder.mkdir()
    (folder / "systemctl").write_text(FAKE_SYSTEMCTL)
    (folder / "systemctl").chmod(0o755)
    for key, value in {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "FAKE_SYSTEMD": "offline",
                       "FAKE_LOG": str(tmp_path / "fake.log"),
                       "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}.items():
        monkeypatch.setenv(key, value)
    return home


def test_install_and_uninstall_the_anchors_service(team: AnchoredTeam, offline_systemd: Path) -> None:
    done = team.anchor.json("install", "--service", "--anchor", "--interval", "20")["service"]
    unit = Path(done["path"])
    assert unit.name.startswith("gitive-anchor-") and done["outcome"] == "written" and not done["started"]
    assert f"-m gitive.anchor --repo {team.anchor.clone} --interval 20" in unit.read_text()
    record = json.loads((team.anchor.home / "anchor-service.json").read_text())
    assert record["path"] == str(unit) and not (team.anchor.home / "service.json").exists()
    assert team.anchor.json("install", "--service", "--anchor", "--interval", "20")["service"]["outcome"] == "unchanged"
    one_line_error(team.bob.run("install", "--service", "--anchor"), "not the team's anchor")
    one_line_error(team.anchor.run("install", "--anchor"), "--anchor goes with --service")
    removed = team.anchor.json("uninstall", "--service", "--anchor")["service"]
    assert removed["outcome"] == "removed" and not unit.exists()
    assert not (team.anchor.home / "anchor-service.json").exists()
