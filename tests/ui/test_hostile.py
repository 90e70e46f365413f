"""What an attacker can push never shows as the team's: a teammate's text cannot inject markup into the page, an
equivocating key shows as a quarantined log and a doctor finding, and a stranger's entries are no activity."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from selenium.webdriver.common.by import By

from gitive.store import logs, refs
from testing import fixtures
from testing.lessons import propose
from testing.machines import TEAM_SCOPE, Machine, make_key, note
from testing.ui import Team

HOSTILE = '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=2"> escape stored text'


def test_hostile_lesson_text_is_shown_as_text(team: Team, serve: Any, browser: Any, artifacts: Path) -> None:
    a, b, *_ = team.machines
    lesson = propose(b, HOSTILE)
    b.ok("sync")
    a.ok("sync")
    server = serve(a)
    page = server.request("/memory").text
    assert "<script>window.__pwned" not in page and "&lt;script&gt;window.__pwned=1&lt;/script&gt;" in page
    browser.get(server.url.replace("/?", "/memory?"))
    assert browser.execute_script("return window.__pwned === undefined")
    assert not browser.find_elements(By.CSS_SELECTOR, "main img, main script")
    assert HOSTILE in browser.find_element(By.CSS_SELECTOR, f'tr[data-lesson="{lesson}"]').text
    browser.save_screenshot(str(artifacts / "hostile-text.png"))


def test_equivocation_and_strangers_show_on_health_not_as_activity(team: Team, serve: Any, tmp_path: Path) -> None:
    a, b, *_ = team.machines
    # bob's key copied to a second machine: both sign the next seq of bob's team log
    twin = Machine("b-copy", b.home, tmp_path / "b-copy")
    shutil.copytree(b.clone, twin.clone)
    b.append(note("from the desk", a.id), log="team")
    b.ok("sync")
    twin.append(note("from the copy", a.id), log="team")
    mirror = fixtures.init_bare(tmp_path / "mirror.git")
    twin.git("remote", "add", "mirror", str(mirror))
    twin.git("push", "--quiet", "mirror", refs.log_ref(b.id, "team"))
    a.git("remote", "add", "mirror", str(mirror))
    a.git("config", "--add", "remote.mirror.fetch", "+refs/hive/*:refs/hive-remotes/mirror/*")  # sync uses it
    # a stranger's key, never admitted, writes entries and pushes them to the team's remote
    stranger = Machine("m", tmp_path / "mallory-home", fixtures.clone(team.remote, tmp_path / "mallory"))
    stranger.home.mkdir(mode=0o700)
    key = make_key(stranger)
    from gitive.core.keys import machine_id

    for i in range(3):
        logs.append(stranger.repo, key, a.team_id, "team", dict(TEAM_SCOPE), note(i, a.id))
    stranger.git("push", "--quiet", "origin", f"refs/hive/logs/{machine_id(key)}/team")
    a.run("sync")
    server = serve(a)
    health = server.json("/health")
    kinds = {p["kind"] for p in health["problems"]}
    assert {"equivocation", "unknown-signer"} <= kinds
    [quarantined] = health["quarantined"]
    assert (quarantined["author"], quarantined["log"]) == (b.id, "team")
    page = server.request("/health").text
    assert f"quarantined from seq {quarantined['from_seq']}" in page and "unknown-signer" in page
    team_view = server.json("/team")
    machines = {m["machine"] for p in team_view["people"] for m in p["machines"]}
    assert machine_id(key) not in machines
