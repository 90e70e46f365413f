"""The daemon serves every repository of a team, not one per team store: an attached repository's project
records (in itself, with its own remotes) are pushed by the daemon's sync too."""

from __future__ import annotations

from pathlib import Path

from gitive.daemon.service import Service, store_key, sync_key
from testing import fixtures
from testing.machines import Fleet, Machine


def test_the_daemon_syncs_an_attached_repository_with_its_own_remote(tmp_path: Path, monkeypatch) -> None:
    fleet = Fleet(tmp_path / "fleet")
    api_remote, tools_remote = fixtures.init_bare(tmp_path / "api.git"), fixtures.init_bare(tmp_path / "tools.git")
    api = fleet.found(fleet.machine("laptop", api_remote), "alice")
    tools = Machine("tools", api.home, fixtures.clone(tools_remote, tmp_path / "clones" / "tools"))
    tools.ok("attach")
    (tools.clone / "n.txt").write_text("n\n")
    tools.git("add", "n.txt")
    tools.git("commit", "-q", "-m", "n")
    tools.ok("lessons", "propose", "--kind", "Gotcha", "--text", "the tools build caches wheels",
             "--evidence", "file:n.txt")
    monkeypatch.setenv("GITIVE_HOME", str(api.home))
    service = Service(30)
    assert service.add_repo(api.clone) and service.add_repo(tools.clone)
    from gitive.team.hive import open_hive

    hives = service.repo_hives()
    assert set(hives) == {sync_key(open_hive(api.clone)), sync_key(open_hive(tools.clone))}
    assert len(service.hives()) == 1 and store_key(open_hive(tools.clone)) in service.hives()
    service.sync(only_due=False)
    logs = [n for n in fixtures.ref_tips(tools_remote) if n.startswith(f"refs/hive/logs/{api.id}/project-")]
    assert logs, fixtures.ref_tips(tools_remote)
