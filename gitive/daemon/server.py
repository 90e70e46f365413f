"""The daemon's local socket: ``$GITIVE_HOME/daemon.sock`` (mode 0600), one JSON object per line each way."""

from __future__ import annotations

import json
import os
import socketserver
from pathlib import Path
from typing import Any

from gitive.daemon import ranking
from gitive.daemon.mailbox import DEFAULT_CAP
from gitive.daemon.service import Service

MAX_LINE = 1024 * 1024


def handle(service: Service, request: dict[str, Any]) -> dict[str, Any]:
    op = request.get("op")
    if op == "ping":
        return {"ok": True, "pid": os.getpid()}
    if op == "status":
        return {"ok": True, **service.describe()}
    if op == "pending":
        items = service.pending(str(request.get("harness", "")), str(request.get("session", "")),
                                room=_size(request.get("room")), cap=_size(request.get("cap")),
                                until=request["until"] if isinstance(request.get("until"), int) else None)
        return {"ok": True, "items": items}
    if op == "unhand":  # handed to a hook whose reply had no room left for them: queued again at once
        service.unhand(str(request.get("harness", "")), str(request.get("session", "")),
                       [str(i) for i in request.get("ids") or []])
        return {"ok": True}
    if op == "prepare":  # a prompt (or a failed command) arrived: rank its lessons into the session's spool
        count = ranking.prepare(str(request.get("harness", "")), str(request.get("session", "")),
                                str(request.get("hook", "")), _text(request.get("cwd")),
                                prompt=_text(request.get("prompt")), error=_text(request.get("error")))
        return {"ok": True, "items": count}
    if op == "spooled":  # a hook delivered from its spool: book it, and hand out what comes next (a part)
        return {"ok": True, "items": service.spool(str(request.get("harness", "")),
                                                   str(request.get("session", "")), read=request.get("read") is True)}
    if op == "spool":  # something became due outside the daemon (a person released a held message)
        return {"ok": True, "items": service.spool()}
    if op == "delivered":
        ids = [str(i) for i in request.get("ids") or []]
        return {"ok": True, "done": service.delivered(str(request.get("harness", "")),
                                                      str(request.get("session", "")), ids)}
    if op == "who" and request.get("repo"):  # `gitive who` in that repository: the directory, read-only
        return {"ok": True, "sessions": service.directory(str(request["repo"]))}
    if op == "who":
        result = service.refresh_presence()
        rows = [row for store in result.values() for row in store["directory"]]
        return {"ok": True, "sessions": rows}
    if op == "sync":
        if request.get("repo"):  # `gitive sync` in that repository, answered here
            report = service.sync_repo(str(request["repo"]))
            return {"ok": True, "report": report.as_dict(), "lines": report.lines()}
        return {"ok": True, "hives": service.sync(only_due=False)}
    if op == "push":
        return {"ok": True, "pushed": service.push_now(str(request.get("repo", "")))}
    if op == "publish":  # a claim changed: publish presence now (the watcher pushes it), not within 15 s
        service.refresh_presence(force=True)
        return {"ok": True}
    if op == "add-repo":
        return {"ok": service.add_repo(str(request.get("path", "")))}
    return {"ok": False, "error": f"unknown op {op!r}"}


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _size(value: Any) -> int:
    """A byte count a hook sent (how much its reply can still hold); the smallest harness cap if absent."""
    if isinstance(value, int) and not isinstance(value, bool):
        return min(max(value, 0), MAX_LINE)
    return DEFAULT_CAP


class _Handler(socketserver.StreamRequestHandler):
    def handle(self) -> None:
        try:
            self._serve()
        except OSError:  # a hook that gave up closed its end (reset, broken pipe): nothing to answer
            return

    def _serve(self) -> None:
        service: Service = self.server.service  # type: ignore[attr-defined]
        for raw in self.rfile:
            if len(raw) > MAX_LINE:
                break
            request: Any = {}
            try:
                request = json.loads(raw)
                reply = handle(service, request) if isinstance(request, dict) else {"ok": False, "error": "not an object"}
            except Exception as exc:  # one bad request never takes the daemon down
                reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
            try:
                self.wfile.write(json.dumps(reply, default=str).encode() + b"\n")
                self.wfile.flush()
            except OSError:  # a caller that only notifies closes without reading the reply
                if request.get("op") == "pending" and reply.get("items"):  # a hook that is gone: put them back
                    service.unhand(str(request.get("harness", "")), str(request.get("session", "")),
                                   [str(i["id"]) for i in reply["items"]])
                return


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def __init__(self, path: Path, service: Service) -> None:
        path.unlink(missing_ok=True)
        old = os.umask(0o177)  # the socket is created 0600: only this user may talk to the daemon
        try:
            super().__init__(str(path), _Handler)
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        self.service = service
