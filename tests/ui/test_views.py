"""Each view in a real headless Chromium, for a team built in the test: what the DOM shows, and screenshots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from selenium.webdriver.common.by import By

from testing.ui import Server, Team
from tests.ui.conftest import OWED


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
    assert browser.current_url.endswith("/next")  # the first view: what needs this person
    browser.find_element(By.CSS_SELECTOR, 'nav a[href="/team"]').click()
    _wait(browser, "table.sessions tbody tr")
    browser.save_screenshot(str(artifacts / "team.png"))
    sessions = _texts(browser, "table.sessions tbody tr")
    assert len(sessions) == 3
    assert any("alice/" in s for s in sessions) and any("bob/" in s for s in sessions)
    overlapping = browser.find_elements(By.CSS_SELECTOR, "table.sessions tr.overlapping")
    assert len(overlapping) == 2  # alice and bob both modify src/app.py
    assert "src/app.py" in browser.find_element(By.ID, "overlaps").text
    spans = browser.find_elements(By.CSS_SELECTOR, "#presence-timeline svg rect.span")
    assert len(spans) == 3 and all(float(r.get_attribute("width")) > 0 for r in spans)
    people = _texts(browser, "table.people tbody tr")
    assert {p.split()[0] for p in people} == {"alice", "anchor", "bob", "carol"}

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
    assert browser.find_elements(By.CSS_SELECTOR, "#sync-latency svg rect.bar")  # teammates' entries arriving

    _open(browser, server, "/obligations")
    browser.save_screenshot(str(artifacts / "obligations.png"))
    for section, ident in team.obligations.items():
        row = browser.find_element(By.CSS_SELECTOR, f'tr[data-obligation="{ident}"]')
        where = "open" if section == "unknown" else section
        assert row.find_element(By.XPATH, "ancestor::section").get_attribute("id") == where, section
        assert OWED[section] in row.text and ident[:12] in row.text
    fired = browser.find_element(By.CSS_SELECTOR, f'tr[data-obligation="{team.obligations["fired"]}"]')
    assert "bob → alice" in fired.text and "auth-rotation" in fired.text and "true" in fired.text
    assert "condition fired" in fired.text and "late" in fired.text
    unknown = browser.find_element(By.CSS_SELECTOR, f'tr[data-obligation="{team.obligations["unknown"]}"]')
    assert "unknown" in unknown.text and "never reaches an anchor" in unknown.text
    late = browser.find_element(By.CSS_SELECTOR, f'tr[data-obligation="{team.obligations["late"]}"]')
    assert "past-due" in late.text and "d ago" in late.text
    assert not browser.find_elements(By.ID, "no-anchor")

    _open(browser, server, "/gate")
    browser.save_screenshot(str(artifacts / "gate.png"))
    people = {r.get_attribute("data-person"): r.text for r in
              browser.find_elements(By.CSS_SELECTOR, "table.gate-people tbody tr")}
    assert set(people) == {"alice", "bob", "carol"}
    assert "live" in people["alice"] and "1 of 3" in people["alice"]
    assert "shadow" in people["bob"] and "shadow" in people["carol"]
    ledger = _texts(browser, "table.ledger tbody tr")
    assert len(ledger) == 3 and any("carol" in r and "digest" in r for r in ledger)
    assert all("gitive why " in r for r in ledger)
    # the ledger holds no item text; the row names its item by the item record's title (bob's obligation fired)
    # an anchor's title is sealed to the machines of the person it is for: alice's machine names her own item,
    # and says of bob's and carol's that their titles are sealed to their machines
    assert any("bob" in r and "title sealed to bob's machines" in r for r in ledger)
    assert not any("alice" in r.split("\n")[0] and "title sealed" in r for r in ledger)
    chart = browser.find_element(By.CSS_SELECTOR, "#interruptions-alice svg")
    assert chart.find_element(By.CSS_SELECTOR, ".limit") and len(chart.find_elements(By.CSS_SELECTOR, "rect.bar")) == 14
    assert browser.find_elements(By.CSS_SELECTOR, "#ledger-timeline circle.mark")
    carol = browser.find_elements(By.CSS_SELECTOR, "#interruptions-carol rect.bar")  # a digest interrupts nobody
    assert len(carol) == 14 and {float(r.get_attribute("height")) for r in carol} == {0.0}
