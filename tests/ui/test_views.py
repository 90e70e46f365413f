"""Each view in a real headless Chromium, for a team built in the test: what the DOM shows, and screenshots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from selenium.webdriver.common.by import By

from testing.ui import Server, Team


def _open(browser: Any, server: Any, path: str) -> None:
    browser.get(f"http://127.0.0.1:{server.port}{path}")


def _wait(browser: Any, css: str, timeout: float = 10) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(browser, timeout).until(lambda d: d.find_element(By.CSS_SELECTOR, css))


def _texts(browser: Any, css: str) -> list[str]:
    return [e.text for e in browser.find_elements(By.CSS_SELECTOR, css)]


def test_every_view_renders_the_team(shared: tuple[Team, Server], browser: Any, artifacts: Path) -> None:
    team, server = shared
    browser.get(server.url)  # the token: exchanged for a cookie, then the address without it
    assert "token=" not in browser.current_url
    assert browser.current_url.endswith("/team")
    browser.save_screenshot(str(artifacts / "team.png"))
    sessions = _texts(browser, "table.sessions tbody tr")
    assert len(sessions) == 3
    assert any("alice/" in s for s in sessions) and any("bob/" in s for s in sessions)
    overlapping = browser.find_elements(By.CSS_SELECTOR, "table.sessions tr.overlapping")
    assert len(overlapping) == 2  # alice and bob both modify src/app.py
    assert "src/app.py" in browser.find_element(By.ID, "overlaps").text
    people = _texts(browser, "table.people tbody tr")
    assert {p.split()[0] for p in people} == {"alice", "bob", "carol"}

    _open(browser, server, "/memory")
    browser.save_screenshot(str(artifacts / "memory.png"))
    queue = browser.find_element(By.CSS_SELECTOR, "table.queue").text
    assert "payments test flakes" in queue
    assert f"gitive review approve {team.lessons['proposed'][:12]}" in queue
    assert "staging database" in queue
    verified = browser.find_element(By.CSS_SELECTOR, "table.verified").text
    assert "make gen" in verified and "alice" in verified
    assert browser.find_element(By.ID, "lessons-cited")  # the citation made in the build

    search = browser.find_element(By.ID, "q")
    search.send_keys("client drift proto")
    search.submit()
    results = _wait(browser, "table.results").text
    assert "make gen" in results
    browser.save_screenshot(str(artifacts / "memory-search.png"))

    _open(browser, server, "/health")
    browser.save_screenshot(str(artifacts / "health.png"))
    assert "No problems found" in browser.find_element(By.ID, "doctor").text
    assert browser.find_elements(By.CSS_SELECTOR, "table.rounds tbody tr")

    for view in ("obligations", "gate"):
        _open(browser, server, f"/{view}")
        browser.save_screenshot(str(artifacts / f"{view}.png"))
        assert "not enabled on this team" in browser.find_element(By.TAG_NAME, "main").text
