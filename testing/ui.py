"""Helpers for dashboard tests: `gitive ui` as a real process, raw HTTP requests with any headers, and a
headless Chromium (Debian's ``chromium`` and ``chromium-driver``; tests skip with the reason when absent).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest

from testing.machines import Machine

GITIVE = Path(sys.executable).with_name("gitive")
CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--disable-dev-shm-usage", "--window-size=1280,1000"]


@dataclass
class Team:
    remote: Path
    machines: list[Machine]
    lessons: dict[str, str]
    obligations: dict[str, str] = field(default_factory=dict)  # section -> the obligation's id


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    @property
    def text(self) -> str:
        return self.body.decode()

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Server:
    machine: Machine
    proc: subprocess.Popen[bytes]
    url: str
    port: int
    log: Path

    @property
    def token(self) -> str:
        return parse_qs(urlparse(self.url).query)["token"][0]

    @classmethod
    def start(cls, machine: Machine, log: Path, *args: str) -> Server:
        """`gitive ui --json` in ``machine``'s clone with its home; wait for its address line."""
        env = {**os.environ, "GITIVE_HOME": str(machine.home)}
        err = open(log, "wb")  # noqa: SIM115 - the child writes it for the whole test
        proc = subprocess.Popen([str(GITIVE), "ui", "--json", *args], cwd=machine.clone, env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=err, start_new_session=True)
        err.close()
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line:
            proc.wait(timeout=10)
            raise AssertionError(f"gitive ui exited {proc.returncode}: {log.read_text()}")
        found = json.loads(line)
        return cls(machine, proc, found["url"], found["port"], log)

    def stop(self) -> int | None:
        """SIGINT (what Ctrl-C sends), then SIGKILL the group if it lingers; the exit code."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        return self.proc.returncode

    def request(self, path: str, *, method: str = "GET", headers: dict[str, str] | None = None,
                auth: bool = True, body: bytes | None = None) -> Reply:
        """One request on a fresh connection; ``auth`` adds the bearer token, and Host defaults to ours."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        sent = {"Host": f"127.0.0.1:{self.port}", **(headers or {})}
        if auth:
            sent.setdefault("Authorization", f"Bearer {self.token}")
        try:
            conn.request(method, path, body=body, headers=sent)
            response = conn.getresponse()
            return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
        finally:
            conn.close()

    def json(self, path: str) -> Any:
        reply = self.request(path, headers={"Accept": "application/json"})
        assert reply.status == 200, (reply.status, reply.text)
        return reply.json()


def require_browser() -> None:
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.exists()]
    if missing:
        pytest.skip(f"no browser: {', '.join(missing)} missing; install Debian's chromium and chromium-driver "
                    "(`apt-get install -y chromium chromium-driver`, as .ci/run does)")
    try:
        import selenium  # noqa: F401
    except ImportError:
        pytest.skip("selenium is not installed: `pip install -e '.[test]'`")


@contextlib.contextmanager
def chromium(profile: Path, *, javascript: bool = True) -> Iterator[Any]:
    """A headless Chromium with a fresh profile, driven through Debian's chromedriver (no download)."""
    require_browser()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile.mkdir(parents=True, exist_ok=True)
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in [*CHROMIUM_FLAGS, f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    if not javascript:
        options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    service = Service(executable_path=str(CHROMEDRIVER), log_output=str(profile / "chromedriver.log"))
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
