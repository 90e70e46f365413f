"""The Starlette application: one route per view (HTML, or JSON for ``Accept: application/json``), the event
stream for live pages, and the packaged static files, all behind :class:`gitive.ui.guard.Guard`.

Every view runs in a worker thread with its own hive and a read-only SQLite connection to the index
(``mode=ro``): the dashboard cannot write the index even by mistake, and it writes no ref.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from gitive.core.clock import now_ms
from gitive.errors import GitiveError
from gitive.index import db
from gitive.team.hive import Hive, open_hive
from gitive.ui import html
from gitive.ui.changes import Changes
from gitive.ui.guard import Guard
from gitive.ui.views import gate, health, mail, memory, needs, obligations, team

KEEPALIVE_S = 15.0
Params = dict[str, Any]


class View(NamedTuple):
    title: str
    collect: Callable[[Hive, sqlite3.Connection, int, Params], dict[str, Any]]
    render: Callable[[dict[str, Any]], str]


def _memory(hive: Hive, conn: sqlite3.Connection, now: int, p: Params) -> dict[str, Any]:
    page = p.get("page", "1")
    return memory.collect(hive, conn, now, query=p.get("q", ""), files=p.get("files", "").split(),
                          proposed=p.get("proposed") in ("1", "on", "true"),
                          page=int(page) if page.isdigit() and len(page) < 9 else 1)


VIEWS: dict[str, View] = {
    "next": View("Next", lambda hive, conn, now, p: needs.collect(hive, conn, now), needs.render),
    "team": View("Team", lambda hive, conn, now, p: team.collect(hive, conn, now), team.render),
    "memory": View("Memory", _memory, memory.render),
    "obligations": View("Obligations", lambda hive, conn, now, p: obligations.collect(hive, conn, now),
                        obligations.render),
    "gate": View("Gate", lambda hive, conn, now, p: gate.collect(hive, conn, now), gate.render),
    "mail": View("Mail", lambda hive, conn, now, p: mail.collect(hive, conn, now), mail.render),
    "health": View("Health", lambda hive, conn, now, p: health.collect(hive, conn, now), health.render),
    "lesson": View("Lesson", lambda hive, conn, now, p: memory.collect_lesson(hive, conn, p["lesson"], now),
                   memory.render_lesson),
}


@dataclass
class Dashboard:
    repo: Path

    def read(self, view: str, params: Params) -> tuple[dict[str, Any], str, str]:
        """(data, rendered main HTML, team name) of ``view``, from a fresh read-only look at the index."""
        hive = open_hive(self.repo)
        with db.connect(hive.index_path, readonly=True) as conn:
            data = VIEWS[view].collect(hive, conn, now_ms(), params)
            name = team.team_name(conn, hive.founder)
        return data, VIEWS[view].render(data), name


def _wants_json(request: Request) -> bool:
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/html" not in accept


def _error_page(status: int, title: str, text: str, request: Request) -> Response:
    if _wants_json(request):
        return JSONResponse({"error": text}, status_code=status)
    main = f'<h1>{html.h(title)}</h1><p class="callout warn">{html.h(text)}</p>'
    return HTMLResponse(html.page("", title, main, team="", repo=""), status_code=status)


def _endpoint(dash: Dashboard, view: str) -> Callable[[Request], Any]:
    async def endpoint(request: Request) -> Response:
        params = dict(request.query_params) | dict(request.path_params)
        start = time.perf_counter()
        try:
            data, main, name = await run_in_threadpool(dash.read, view, params)
        except GitiveError as exc:
            return _error_page(404, "Not found", str(exc), request)
        except sqlite3.OperationalError as exc:  # no index yet, or one being rebuilt right now
            return _error_page(503, "Index unavailable", f"the index cannot be read right now ({exc}); "
                               "run `gitive sync`, then reload", request)
        if _wants_json(request):
            response: Response = JSONResponse(data)
        elif request.headers.get("x-gitive-fragment"):
            response = HTMLResponse(main)
        else:
            shown = "memory" if view == "lesson" else view
            response = HTMLResponse(html.page(shown, VIEWS[view].title, main, team=name, repo=str(dash.repo)))
        # What the view cost on the server (reads, ranking, rendering): browsers' developer tools show it.
        response.headers["server-timing"] = f"view;dur={(time.perf_counter() - start) * 1000:.1f}"
        return response
    return endpoint


def _home(request: Request) -> Response:
    """``/`` is the Next view (what needs this person now). The query goes along: ``curl -L`` of the printed
    address (token in the query, no browser cookie) must reach the view, not a 401 on an address that lost its
    token."""
    query = request.url.query
    return RedirectResponse("/next" + (f"?{query}" if query else ""), status_code=307)


def _events(changes: Changes) -> Callable[[Request], Any]:
    async def events(request: Request) -> Response:
        async def stream() -> AsyncIterator[str]:
            seen = changes.version
            yield f"retry: 2000\nevent: hello\ndata: {json.dumps({'version': seen})}\n\n"
            while True:
                version = await changes.wait(seen, KEEPALIVE_S)
                if version == seen:
                    yield ": keepalive\n\n"
                    continue
                seen = version
                yield f"event: change\ndata: {json.dumps({'version': seen, 'moved': changes.moved})}\n\n"
        return StreamingResponse(stream(), media_type="text/event-stream", headers={"x-accel-buffering": "no"})
    return events


def build(repo: Path, token: str, port: int, *, poll_every: float | None = None) -> Guard:
    """The whole app for the hive of ``repo``, guarded by ``token`` on ``port``."""
    dash = Dashboard(repo)
    changes = Changes(repo) if poll_every is None else Changes(repo, poll_every)

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        await changes.start()
        yield
        await changes.stop()

    routes = [Route("/", _home, methods=["GET", "HEAD"]),
              *[Route(f"/{name}", _endpoint(dash, name), methods=["GET", "HEAD"]) for name in VIEWS if name != "lesson"],
              Route("/lessons/{lesson}", _endpoint(dash, "lesson"), methods=["GET", "HEAD"]),
              Route("/events", _events(changes), methods=["GET"]),
              Route("/favicon.ico", lambda request: Response(status_code=204), methods=["GET", "HEAD"]),
              Mount("/static", StaticFiles(packages=[("gitive.ui", "static")]), name="static")]
    return Guard(Starlette(routes=routes, lifespan=lifespan), token, port)
