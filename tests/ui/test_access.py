"""Accessibility and polish in a real Chromium: keyboard navigation, dark and light schemes, and pages that read
without JavaScript."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

from testing import ui as ui_testing
from testing.ui import Server, Team


def _active(browser: Any) -> Any:
    return browser.switch_to.active_element


def _keys(browser: Any, *keys: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(browser).send_keys(*keys).perform()


def test_keyboard_reaches_every_view_search_and_rows(shared: tuple[Team, Server], browser: Any, artifacts: Path) -> None:
    server = shared[1]
    browser.get(server.url)
    WebDriverWait(browser, 10).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-live") == "1")
    _keys(browser, "7")
    WebDriverWait(browser, 10).until(lambda d: d.current_url.endswith("/health"))
    _keys(browser, "3")
    WebDriverWait(browser, 10).until(lambda d: d.current_url.endswith("/memory"))
    _keys(browser, "/")
    assert _active(browser).get_attribute("id") == "q"
    _keys(browser, "make gen", Keys.ENTER)
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "table.results"))
    _keys(browser, "4")  # typing in the search box never switches views; outside it, 4 does
    WebDriverWait(browser, 10).until(lambda d: d.current_url.endswith("/obligations"))
    browser.find_element(By.TAG_NAME, "body").click()
    _keys(browser, "j")
    assert _active(browser).get_attribute("data-obligation")  # rows of every view are reachable by keys
    _keys(browser, "5")
    WebDriverWait(browser, 10).until(lambda d: d.current_url.endswith("/gate"))
    browser.find_element(By.TAG_NAME, "body").click()
    _keys(browser, "j")
    assert _active(browser).get_attribute("data-person")
    browser.back()
    browser.back()
    WebDriverWait(browser, 10).until(lambda d: "/memory" in d.current_url)
    browser.find_element(By.TAG_NAME, "body").click()
    _keys(browser, "j")
    first = _active(browser)
    assert first.tag_name == "tr" and first.get_attribute("data-lesson")
    _keys(browser, "j")
    assert _active(browser).get_attribute("data-lesson") != first.get_attribute("data-lesson")
    _keys(browser, "k")
    assert _active(browser).get_attribute("data-lesson") == first.get_attribute("data-lesson")
    lesson = first.get_attribute("data-lesson")
    _keys(browser, Keys.ENTER)
    WebDriverWait(browser, 10).until(lambda d: d.current_url.endswith(f"/lessons/{lesson}"))
    browser.save_screenshot(str(artifacts / "lesson.png"))
    # Tab order starts at the skip link, then the views
    browser.get(f"http://127.0.0.1:{server.port}/team")
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.TAB)
    assert _active(browser).get_attribute("class") == "skip"


def _background(browser: Any) -> str:
    return browser.execute_script("return getComputedStyle(document.body).backgroundColor")


def test_dark_and_light_schemes_follow_the_system_and_the_switch(shared: tuple[Team, Server], browser: Any,
                                                                  artifacts: Path) -> None:
    server = shared[1]
    light, dark = "rgb(251, 251, 250)", "rgb(21, 24, 27)"
    try:
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [
            {"name": "prefers-color-scheme", "value": "dark"}]})
        browser.get(server.url)
        browser.execute_script("localStorage.clear()")
        browser.refresh()
        assert _background(browser) == dark
        browser.save_screenshot(str(artifacts / "team-dark.png"))
        browser.get(f"http://127.0.0.1:{server.port}/gate")
        assert _background(browser) == dark
        browser.save_screenshot(str(artifacts / "gate-dark.png"))
        browser.get(f"http://127.0.0.1:{server.port}/team")
        browser.find_element(By.ID, "theme").click()
        assert _background(browser) == light
        browser.refresh()  # the choice is kept
        assert _background(browser) == light
        browser.execute_script("localStorage.clear()")
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [
            {"name": "prefers-color-scheme", "value": "light"}]})
        browser.refresh()
        assert _background(browser) == light
        _keys(browser, "t")
        assert _background(browser) == dark
    finally:
        browser.execute_script("localStorage.clear()")
        browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


def test_pages_read_without_javascript(shared: tuple[Team, Server], tmp_path: Path, artifacts: Path) -> None:
    team, server = shared
    with ui_testing.chromium(tmp_path / "profile", javascript=False) as browser:
        browser.get(server.url)
        assert browser.current_url.endswith("/next")  # the token exchange is a server redirect, not script
        browser.find_element(By.CSS_SELECTOR, 'nav a[href="/team"]').click()
        assert len(browser.find_elements(By.CSS_SELECTOR, "table.sessions tbody tr")) == 3
        assert browser.find_element(By.ID, "live").text == "static page"
        assert not browser.find_element(By.ID, "theme").is_displayed()
        browser.find_element(By.CSS_SELECTOR, 'nav a[href="/memory"]').click()
        assert f"gitive review approve {team.lessons['proposed'][:12]}" in browser.find_element(By.ID, "main").text
        browser.find_element(By.ID, "q").send_keys("make gen", Keys.ENTER)
        assert "make gen" in browser.find_element(By.CSS_SELECTOR, "table.results").text
        browser.save_screenshot(str(artifacts / "memory-no-js.png"))
        browser.find_element(By.CSS_SELECTOR, 'nav a[href="/obligations"]').click()
        fired = browser.find_element(By.CSS_SELECTOR, f'#fired tr[data-obligation="{team.obligations["fired"]}"]')
        assert "remove the grace period" in fired.text
        browser.find_element(By.CSS_SELECTOR, 'nav a[href="/gate"]').click()
        assert len(browser.find_elements(By.CSS_SELECTOR, "table.ledger tbody tr")) == 3
        assert browser.find_element(By.CSS_SELECTOR, "#interruptions-alice svg")
        browser.save_screenshot(str(artifacts / "gate-no-js.png"))
