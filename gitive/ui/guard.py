"""The dashboard's door: loopback Host only, this run's token, no cross-origin requests, and nothing but reads.

An ASGI middleware in front of every route (static files and the event stream included):

- ``Host`` must name this server (``127.0.0.1:<port>`` or ``localhost:<port>``), so a DNS-rebinding page that
  resolves its own name to 127.0.0.1 is refused;
- a request carrying an ``Origin`` other than this server's, or a cross-site ``Sec-Fetch-Site`` that is not a
  top-level navigation, is refused, so another page can neither read the JSON nor send a POST;
- the token comes as ``?token=`` (then the browser gets it as a ``SameSite=Strict`` cookie and is redirected to
  the same address without it, so it stays out of history and referrers), as ``Authorization: Bearer``, or as
  that cookie; compared in constant time;
- only ``GET`` and ``HEAD`` exist: the dashboard can change nothing.

Every answer carries a strict Content-Security-Policy (no inline script, nothing from elsewhere) and no-store.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SAFE_METHODS = ("GET", "HEAD")
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "form-action 'self'; base-uri 'none'; frame-ancestors 'none'")
HEADERS = [(b"content-security-policy", CSP.encode()), (b"x-content-type-options", b"nosniff"),
           (b"referrer-policy", b"no-referrer"), (b"cache-control", b"no-store"), (b"x-frame-options", b"DENY"),
           (b"cross-origin-resource-policy", b"same-origin")]


def cookie_name(port: int) -> str:
    # Browsers keep cookies per host, not per port: two dashboards on one machine must not share one.
    return f"gitive_ui_{port}"


class Guard:
    def __init__(self, app: ASGIApp, token: str, port: int) -> None:
        self.app, self.token, self.port = app, token, port
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        self.origins = {f"http://{host}" for host in self.hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refusal = self._refusal(scope, headers)
        if refusal:
            await _plain(send, *refusal)
            return
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        given = dict(query).get("token")
        if given is not None and self._ok(given):
            if scope["method"] == "GET" and "text/html" in headers.get("accept", ""):
                await self._redirect_with_cookie(scope, send, [(k, v) for k, v in query if k != "token"])
                return
        elif not (self._ok(_bearer(headers)) or self._ok(_cookie(headers, cookie_name(self.port)))):
            await _plain(send, 401, "gitive ui: missing or wrong token; open the address `gitive ui` printed")
            return

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS]
            await send(message)

        await self.app(scope, receive, secured)

    def _refusal(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str] | None:
        if headers.get("host") not in self.hosts:
            return 403, f"gitive ui: refused Host {headers.get('host')!r}; open http://127.0.0.1:{self.port}/"
        origin = headers.get("origin")
        if origin is not None and origin not in self.origins:
            return 403, f"gitive ui: refused a cross-origin request from {origin!r}"
        if headers.get("sec-fetch-site") == "cross-site" and headers.get("sec-fetch-mode") != "navigate":
            return 403, "gitive ui: refused a cross-site request"
        if scope["method"] not in SAFE_METHODS:
            return 405, "gitive ui is read-only: review, send and change things at the terminal"
        return None

    def _ok(self, given: str | None) -> bool:
        return bool(given) and hmac.compare_digest(given.encode(), self.token.encode())

    async def _redirect_with_cookie(self, scope: Scope, send: Send, rest: list[tuple[str, str]]) -> None:
        target = scope.get("path", "/") + (f"?{urlencode(rest)}" if rest else "")
        cookie = f"{cookie_name(self.port)}={self.token}; Path=/; HttpOnly; SameSite=Strict"
        await send({"type": "http.response.start", "status": 303, "headers": [
            (b"location", target.encode()), (b"set-cookie", cookie.encode()), *HEADERS]})
        await send({"type": "http.response.body", "body": b""})


def _bearer(headers: dict[str, str]) -> str | None:
    value = headers.get("authorization", "")
    return value[7:].strip() if value.lower().startswith("bearer ") else None


def _cookie(headers: dict[str, str], name: str) -> str | None:
    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(headers.get("cookie", ""))
    except Exception:  # a malformed Cookie header is no token, never a crash
        return None
    return jar[name].value if name in jar else None


async def _plain(send: Send, status: int, text: str) -> None:
    body = (text + "\n").encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()), *HEADERS]})
    await send({"type": "http.response.body", "body": body})
