"""Live pages: a change made on another machine reaches an open page through server-sent events, no reload.

Alice's daemon (a real background process) syncs every second; on their own machines bob proposes a lesson,
carol starts a new session, and carol records an obligation (`gitive owe` signs and pushes it). The page in the
browser must show each without being reloaded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from testing import anchor as anchoring
from testing import live
from testing.lessons import propose
from testing.ui import Team

NEW_LESSON = "Pin the protobuf compiler version in CI or generated code churns"
NEW_OBLIGATION = "announce feature z in the changelog"


def _main_text(browser: Any) -> str:
    return browser.find_element(By.ID, "main").text


def test_a_teammates_change_appears_without_a_reload(team: Team, serve: Any, browser: Any, artifacts: Path) -> None:
    a, b, c, _ = team.machines
    server = serve(a)
    with live.real_daemon(a, interval=1.0):
        browser.get(server.url.replace("/?", "/memory?"))
        WebDriverWait(browser, 10).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-live") == "1")
        browser.execute_script("window.__notReloaded = 42;")
        assert NEW_LESSON not in _main_text(browser)

        propose(b, NEW_LESSON, "--tag", "ci")
        b.ok("sync")
        WebDriverWait(browser, 30, 0.2).until(lambda d: NEW_LESSON in _main_text(d))
        assert browser.execute_script("return window.__notReloaded;") == 42
        assert int(browser.find_element(By.TAG_NAME, "body").get_attribute("data-version")) >= 1
        browser.save_screenshot(str(artifacts / "memory-after-update.png"))

        browser.find_element(By.CSS_SELECTOR, 'nav a[href="/team"]').click()
        WebDriverWait(browser, 10).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-live") == "1")
        browser.execute_script("window.__notReloaded = 43;")
        live.hook(c, "session-start", live.session_start(c, "s-c2"))
        live.hook(c, "post-tool", live.edit(c, "s-c2", "docs/notes.md"))
        live.publish_and_sync(c)
        WebDriverWait(browser, 30, 0.2).until(lambda d: "docs/notes.md" in _main_text(d))
        assert browser.execute_script("return window.__notReloaded;") == 43
        browser.save_screenshot(str(artifacts / "team-after-update.png"))

        browser.find_element(By.CSS_SELECTOR, 'nav a[href="/obligations"]').click()
        WebDriverWait(browser, 10).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-live") == "1")
        browser.execute_script("window.__notReloaded = 44;")
        owed = anchoring.owe(c, anchoring.MERGED.format(branch="feature-z"), NEW_OBLIGATION, "--to", "alice")
        WebDriverWait(browser, 30, 0.2).until(
            lambda d: d.find_elements(By.CSS_SELECTOR, f'#open tr[data-obligation="{owed["id"]}"]'))
        row = browser.find_element(By.CSS_SELECTOR, f'tr[data-obligation="{owed["id"]}"]').text
        assert NEW_OBLIGATION in row and "carol → alice" in row and "false" in row
        assert browser.execute_script("return window.__notReloaded;") == 44
        browser.save_screenshot(str(artifacts / "obligations-after-update.png"))
