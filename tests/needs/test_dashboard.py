"""The dashboard on alice's own machine: its first view is ``gitive next`` (the same rows, with titles from the
local records), the shadow item reads as it does in the terminal, and the Mail view shows her mail read-only.
A real ``gitive ui`` process and a headless Chromium."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from testing import needs
from testing.anchor import AnchoredTeam

SHADOW = "would have been delivered: your gate is in shadow (`gitive gate live` to turn it on)"
SAME = ("kind", "id", "why", "act", "title", "item", "account", "state")


def test_the_first_view_is_next_with_one_of_each_kind(needy: tuple[AnchoredTeam, dict[str, Any]], serve: Any,
                                                      browser: Any, tmp_path: Path) -> None:
    team, ids = needy
    cli = team.alice.json("next")
    server = serve(team.alice)
    browser.get(server.url)
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "table.next tbody tr"))
    assert browser.current_url.endswith("/next")
    browser.save_screenshot(str(tmp_path / "next.png"))
    rows = browser.find_elements(By.CSS_SELECTOR, "table.next tbody tr")
    assert [(r.get_attribute("data-kind"), r.get_attribute("data-id")) for r in rows] == [
        (c["kind"], c["id"]) for c in cli]
    for row, c in zip(rows, cli, strict=True):
        text = row.text
        assert c["id"][:12] in text and c["act"] in text and c["title"] in text and c["why"] in text
    texts = {r.get_attribute("data-kind"): r.text for r in rows}
    assert needs.LESSON in texts["lesson"] and needs.PLAIN in texts["message"] and "fix add" in texts["draft"]
    assert needs.WATCH_TITLE in texts["item"] and SHADOW in texts["item"]
    fired = next(r.text for r in rows if r.get_attribute("data-id") == ids["fired"])
    assert SHADOW in fired  # the fired obligation's item, told on its row
    web = server.json("/next")
    assert web["person"] == "alice"
    assert [{k: r[k] for k in SAME} for r in web["rows"]] == [{k: r[k] for k in SAME} for r in cli]
    assert browser.find_element(By.CSS_SELECTOR, 'nav a[data-key="1"]').get_attribute("href").endswith("/next")


def test_the_shadow_item_reads_the_same_on_the_dashboard(needy: tuple[AnchoredTeam, dict[str, Any]],
                                                         serve: Any, browser: Any) -> None:
    team, _ = needy
    [item] = [r for r in team.alice.json("next") if r["kind"] == "item"]
    server = serve(team.alice)
    browser.get(server.url)
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "table.next tbody tr"))
    row = browser.find_element(By.CSS_SELECTOR, f'table.next tr[data-id="{item["id"]}"]')
    assert f"{SHADOW}: {needs.WATCH_TITLE}" in row.text and f"gitive why {item['id'][:12]}" in row.text
    why = team.alice.json("why", item["id"][:12])
    assert why["account"]["words"] == SHADOW
    browser.get(f"http://127.0.0.1:{server.port}/gate")  # the gate's ledger names the item by its title too
    ledger = browser.find_element(By.CSS_SELECTOR, f'table.ledger tr[data-item="{item["id"]}"]')
    assert needs.WATCH_TITLE in ledger.text and "shadow" in ledger.text


def test_the_mail_view_shows_alices_mail_read_only(needy: tuple[AnchoredTeam, dict[str, Any]], serve: Any,
                                                   browser: Any) -> None:
    team, ids = needy
    server = serve(team.alice)
    browser.get(server.url)
    browser.find_element(By.CSS_SELECTOR, 'nav a[href="/mail"]').click()
    WebDriverWait(browser, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, "table.received tbody tr"))
    rows = {r.get_attribute("data-message"): r.text for r in
            browser.find_elements(By.CSS_SELECTOR, "table.received tbody tr")}
    assert set(rows) == {ids["held"], ids["message"]}
    assert "held" in rows[ids["held"]] and "prompt-injection" in rows[ids["held"]]
    assert needs.INJECTION in rows[ids["held"]] and f"gitive release {ids['held']}" in rows[ids["held"]]
    assert needs.PLAIN in rows[ids["message"]] and f"gitive send --reply {ids['message']}" in rows[ids["message"]]
    data = server.json("/mail")
    assert data["unread"] == 1 and [m["id"] for m in data["held"]] == [ids["held"]]
    assert not browser.find_elements(By.CSS_SELECTOR, "main form, main button[type=submit]")  # nothing to act with
    bob = serve(team.bob)
    assert ids["message"] in {m["id"] for m in bob.json("/mail")["sent"]}
    assert bob.json("/mail")["received"] == []
