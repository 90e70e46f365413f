"""The dashboard's door, against the real `gitive ui` process: loopback only, this run's token, no other Host,
no cross-origin request, no method but reads; and a full crawl changes no ref, no index row, no file at home.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import re
import sqlite3
import subprocess
from contextlib import closing
from urllib.parse import urljoin, urlparse

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from testing import fixtures
from testing.lessons import hive_tips
from testing.machines import Machine
from testing.ui import GITIVE, Server, Team

PATHS = ["/", "/next", "/mail", "/team", "/memory", "/health", "/obligations", "/gate", "/events", "/static/app.js",
         "/memory?q=make+gen"]


def _listening_addresses(port: int) -> set[str]:
    """Local addresses of sockets listening on ``port`` (from /proc/net/tcp and tcp6)."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            for line in f.readlines()[1:]:
                local, _, state = line.split()[1:4]
                address, hex_port = local.split(":")
                if int(hex_port, 16) == port and state == "0A":  # LISTEN
                    found.add(address)
    return found


def test_it_listens_on_loopback_only(running: Server) -> None:
    server = running
    assert _listening_addresses(server.port) == {"0100007F"}  # 127.0.0.1, nothing on 0.0.0.0 or ::
    assert server.url.startswith(f"http://127.0.0.1:{server.port}/?token=")
    assert len(server.token) >= 32


@pytest.mark.parametrize("path", PATHS)
def test_a_request_without_the_token_is_refused(running: Server, path: str) -> None:
    server = running
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Cookie": f"gitive_ui_{server.port}=wrong"}):
        reply = server.request(path, auth=False, headers=headers)
        assert reply.status == 401, (path, headers, reply.status)
        assert "token" in reply.text
    wrong = server.request(path.split("?")[0] + "?token=" + "x" * len(server.token), auth=False)
    assert wrong.status == 401


def test_the_token_becomes_a_strict_cookie_and_leaves_the_address(running: Server) -> None:
    server = running
    reply = server.request(f"/memory?token={server.token}&q=gen", auth=False, headers={"Accept": "text/html"})
    assert reply.status == 303
    assert reply.headers["location"] == "/memory?q=gen"
    cookie = reply.headers["set-cookie"]
    assert cookie.startswith(f"gitive_ui_{server.port}={server.token};")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    again = server.request("/memory?q=gen", auth=False, headers={"Cookie": f"gitive_ui_{server.port}={server.token}"})
    assert again.status == 200 and "<h1>Memory</h1>" in again.text
    for header in ("content-security-policy", "x-content-type-options", "referrer-policy"):
        assert header in again.headers
    assert "script-src 'self'" in again.headers["content-security-policy"]
    assert "unsafe-inline" not in again.headers["content-security-policy"]


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1:1", "localhost",
                                  "127.0.0.1.evil.example:{port}", "[::1]:{port}", ""])
def test_another_host_header_is_refused_even_with_the_token(running: Server, host: str) -> None:
    server = running
    reply = server.request("/team", headers={"Host": host.format(port=server.port)})
    assert reply.status == 403
    assert "Host" in reply.text
    assert server.request("/team", headers={"Host": f"localhost:{server.port}"}).status == 200


def test_cross_origin_requests_and_every_write_are_refused(running: Server, lessons: dict[str, str]) -> None:
    server = running
    own = f"http://127.0.0.1:{server.port}"
    for method in ("POST", "PUT", "DELETE", "PATCH"):
        for path in ("/memory", "/lessons/" + lessons["proposed"], "/events"):
            cross = server.request(path, method=method, headers={"Origin": "http://evil.example",
                                                                 "Content-Type": "text/plain"}, body=b"approve")
            assert cross.status == 403, (method, path)
            same = server.request(path, method=method, headers={"Origin": own}, body=b"approve")
            assert same.status == 405 and "read-only" in same.text
    assert server.request("/memory", headers={"Origin": "http://evil.example"}).status == 403
    assert server.request("/memory", headers={"Origin": "null"}).status == 403
    assert server.request("/memory", headers={"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "cors"}).status == 403
    assert server.request("/memory", headers={"Origin": own}).status == 200


@settings(max_examples=40)
@given(host=st.one_of(st.just("{ok}"), st.text(st.characters(codec="latin-1", exclude_characters="\r\n"), max_size=30)),
       origin=st.one_of(st.none(), st.just("{own}"), st.sampled_from(["null", "http://evil.example", "https://127.0.0.1"]),
                        st.text(st.characters(codec="latin-1", exclude_characters="\r\n"), max_size=30)),
       token=st.one_of(st.just("{token}"), st.text(st.characters(codec="ascii", exclude_characters="\r\n"), max_size=40)),
       method=st.sampled_from(["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS"]))
def test_only_the_exact_host_origin_token_and_a_read_get_through(running: Server, host: str, origin: str | None,
                                                                 token: str, method: str) -> None:
    """An attacker choosing every header: a request succeeds only when all of them are exactly right."""
    port = running.port
    host = host.replace("{ok}", f"127.0.0.1:{port}")
    token = token.replace("{token}", running.token)
    headers = {"Host": host, "Authorization": f"Bearer {token}", "Accept": "application/json"}
    if origin is not None:
        headers["Origin"] = origin.replace("{own}", f"http://127.0.0.1:{port}")
    try:
        reply = running.request("/health", method=method, headers=headers, auth=False)
    except (http.client.HTTPException, ValueError, UnicodeEncodeError):
        return  # a header http.client will not send cannot reach the server either
    allowed = (host in (f"127.0.0.1:{port}", f"localhost:{port}") and token == running.token
               and headers.get("Origin") in (None, f"http://127.0.0.1:{port}", f"http://localhost:{port}")
               and method in ("GET", "HEAD"))
    assert (reply.status == 200) == allowed, (reply.status, headers, method)


@pytest.fixture(scope="module")
def running(shared: tuple[Team, Server]) -> Server:
    return shared[1]


@pytest.fixture(scope="module")
def lessons(shared: tuple[Team, Server]) -> dict[str, str]:
    return shared[0].lessons


# --- read-only ------------------------------------------------------------------------------------------------


def _index_state(machine: Machine) -> tuple[str, str, list[str]]:
    path = machine.clone / ".git" / "gitive" / "index.sqlite"
    wal = path.with_name("index.sqlite-wal")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    wal_digest = hashlib.sha256(wal.read_bytes() if wal.exists() else b"").hexdigest()
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        # every stored table (an FTS table's shadow tables included; a contentless FTS table cannot be scanned)
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table' "
                                             "AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' ORDER BY name")]
        dump = [f"{t}: {row!r}" for t in tables for row in conn.execute(f'SELECT * FROM "{t}"')]
    return digest, wal_digest, dump


def _home_files(machine: Machine) -> dict[str, tuple[int, int]]:
    """Every stored file's size and time. Not a WAL database's ``-shm``: that is SQLite's shared memory (the
    WAL's index and each reader's read mark), written by every reader by design and holding no data; what the
    database holds is in the main file and its ``-wal``, which are compared."""
    return {str(p.relative_to(machine.home)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(machine.home.rglob("*")) if p.is_file() and not p.name.endswith(".sqlite-shm")}


def _crawl(server: Server, lessons: dict[str, str]) -> set[str]:
    """Every page reachable by links from every view, as HTML, fragment and JSON, plus searches and assets."""
    todo = ["/next", "/mail", "/team", "/memory", "/obligations", "/gate", "/health",
            "/memory?q=make+gen+proto&proposed=1",
            "/memory?q=&files=api.proto", "/memory?q=%22NEAR%28%29%20*", "/memory?page=2", "/memory?page=x",
            "/memory?page=99999999999999999999", *(f"/lessons/{i}" for i in lessons.values()),
            "/lessons/" + "0" * 64, "/static/app.js", "/static/style.css", "/favicon.ico", "/nowhere"]
    seen: set[str] = set()
    while todo and len(seen) < 300:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for headers in ({"Accept": "text/html"}, {"Accept": "application/json"}, {"X-Gitive-Fragment": "1"}):
            reply = server.request(path, headers=headers)
            assert reply.status in (200, 204, 404), (path, reply.status, reply.text[:300])
            for href in re.findall(r'href="([^"]+)"', reply.text if reply.status == 200 else ""):
                target = urlparse(urljoin(f"http://127.0.0.1:{server.port}{path}", href.replace("&amp;", "&")))
                if target.netloc == f"127.0.0.1:{server.port}":
                    todo.append(target.path + (f"?{target.query}" if target.query else ""))
        server.request(path, method="POST", headers={"Origin": f"http://127.0.0.1:{server.port}"}, body=b"x")
    return seen


def test_a_full_crawl_writes_nothing(shared: tuple[Team, Server]) -> None:
    team, server = shared
    a = team.machines[0]
    server.request("/team")  # the first read-only open of the index is allowed to create its empty WAL
    server.request("/mail")  # and so is the first read-only open of the daemon's database (Next and Mail read it)
    refs_before, remote_before = hive_tips(a), fixtures.ref_tips(team.remote)
    index_before, home_before = _index_state(a), _home_files(a)
    seen = _crawl(server, team.lessons)
    assert len(seen) > 15
    with closing(http.client.HTTPConnection("127.0.0.1", server.port, timeout=5)) as conn:
        conn.request("GET", "/events", headers={"Host": f"127.0.0.1:{server.port}",
                                                "Authorization": f"Bearer {server.token}"})
        assert b"event: hello" in conn.getresponse().read1(200)
    assert hive_tips(a) == refs_before
    assert fixtures.ref_tips(team.remote) == remote_before
    assert _index_state(a) == index_before
    assert _home_files(a) == home_before


def test_a_taken_port_is_a_one_line_error(shared: tuple[Team, Server]) -> None:
    team, first = shared
    b = team.machines[1]
    result = subprocess.run([str(GITIVE), "ui", "--port", str(first.port)], cwd=b.clone,
                            env={**os.environ, "GITIVE_HOME": str(b.home)}, capture_output=True, text=True,
                            timeout=60, stdin=subprocess.DEVNULL)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"gitive: port {first.port} on 127.0.0.1 is in use; pick another with --port, or leave it out for a free one"]


def test_the_printed_address_works_from_curl_which_sends_no_cookie(running: Server) -> None:
    """``curl -L`` of the address ``gitive ui`` printed: ``/`` sends it on to the Team view with its token."""
    server = running
    first = server.request(f"/?token={server.token}", auth=False, headers={"Accept": "*/*"})
    assert first.status == 307 and first.headers["location"] == f"/next?token={server.token}"
    followed = server.request(first.headers["location"], auth=False, headers={"Accept": "*/*"})
    assert followed.status == 200 and "<h1>Next " in followed.text
