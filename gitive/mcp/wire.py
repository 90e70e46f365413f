"""The answers the stdio front gives before the SDK has loaded: ``initialize``, ``server/discover``, ``tools/list``.

Each is exactly what the SDK server (:mod:`gitive.mcp.server`) answers to the same message (a test compares them
for every protocol version, and the front compares every early answer with the SDK's own answer to the
replayed message at run time). Anything the front does not recognise as a well-formed request of one of those
kinds gets no early answer and waits for the SDK, which is never wrong, only slower.

Eras, as the SDK (2.3) serves them over stdio: the client's first request decides, once. ``initialize``
opens the handshake era (2024-11-05 to 2025-11-25: the requested version if the server speaks it, else the
newest); a first request carrying the 2026-07-28 ``_meta`` envelope opens the per-request era, where
``server/discover`` replaces the handshake and every request carries its own version and client info.
"""

from __future__ import annotations

from typing import Any

from gitive import __version__
from gitive.mcp.instructions import INSTRUCTIONS
from gitive.mcp.table import TOOLS

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")  # mcp_types.version's
MODERN_VERSIONS = ("2026-07-28",)
VERSION_KEY = "io.modelcontextprotocol/protocolVersion"
CLIENT_KEY = "io.modelcontextprotocol/clientInfo"
CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
SERVER_KEY = "io.modelcontextprotocol/serverInfo"
SERVER_INFO = {"name": "gitive", "version": __version__}
CAPABILITIES = {"tools": {"listChanged": False}}
MODERN_EXTRAS = {"cacheScope": "private", "ttlMs": 0, "resultType": "complete"}


class Early:
    """What the front may answer on one connection, given what it has seen so far."""

    def __init__(self) -> None:
        self.era: str | None = None  # "handshake" or "modern", from the first request
        self.version: str | None = None  # the version the front negotiated at initialize

    def answer(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """The result for ``message`` if the front can give it now, else None (the SDK answers)."""
        method, params = message.get("method"), message.get("params")
        if not isinstance(method, str) or not _is_id(message.get("id")):
            return None
        if self.era is None:
            self.era = "modern" if method != "initialize" and _has_envelope(params) else "handshake"
        if self.era == "modern":
            if method in ("server/discover", "tools/list") and _envelope_only(params):
                return discover_result() if method == "server/discover" else {"tools": tools(), **_modern()}
            return None
        if method == "initialize" and self.version is None:
            self.version = negotiate(params)
            return initialize_result(self.version) if self.version else None
        if method == "ping" and _bare(params):  # answered before and after initialize alike
            return {}
        if method == "tools/list" and self.version and _bare(params):
            return {"tools": tools()}
        return None


def negotiate(params: Any) -> str | None:
    """The handshake version the SDK picks for these ``initialize`` params (None: not well-formed enough for
    the front to be sure the SDK would accept them)."""
    if not isinstance(params, dict) or set(params) - {"protocolVersion", "capabilities", "clientInfo", "_meta"}:
        return None
    version, caps, client = params.get("protocolVersion"), params.get("capabilities"), params.get("clientInfo")
    if not (isinstance(version, str) and isinstance(caps, dict) and _is_client(client)):
        return None
    if not all(isinstance(v, dict) for v in caps.values()) or ("_meta" in params and not _is_meta(params["_meta"])):
        return None
    return version if version in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[-1]


def initialize_result(version: str) -> dict[str, Any]:
    return {"capabilities": CAPABILITIES, "instructions": INSTRUCTIONS, "protocolVersion": version,
            "serverInfo": dict(SERVER_INFO)}


def discover_result() -> dict[str, Any]:
    return {"capabilities": CAPABILITIES, "instructions": INSTRUCTIONS, "supportedVersions": list(MODERN_VERSIONS),
            **_modern()}


def tools() -> list[dict[str, Any]]:
    return [t.wire() for t in TOOLS]


def _modern() -> dict[str, Any]:
    return {**MODERN_EXTRAS, "_meta": {SERVER_KEY: dict(SERVER_INFO)}}


def _is_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _is_client(value: Any) -> bool:
    """A client ``Implementation`` the SDK certainly accepts (anything unusual, icons say, waits for the SDK)."""
    return isinstance(value, dict) and {"name", "version"} <= set(value) <= _CLIENT_FIELDS \
        and all(isinstance(v, str) for v in value.values())


_CLIENT_FIELDS = {"name", "version", "title", "description", "websiteUrl"}


def _is_meta(value: Any) -> bool:
    return isinstance(value, dict) and not any(key.startswith("io.modelcontextprotocol/") for key in value)


def _has_envelope(params: Any) -> bool:
    return isinstance(params, dict) and isinstance(params.get("_meta"), dict) and VERSION_KEY in params["_meta"]


def _bare(params: Any) -> bool:
    """Params of a handshake-era ``tools/list`` asking for the first (only) page."""
    return params is None or (isinstance(params, dict) and set(params) <= {"_meta"}
                              and ("_meta" not in params or _is_meta(params["_meta"])))


def _envelope_only(params: Any) -> bool:
    """Params that are exactly a well-formed 2026-07-28 envelope and nothing more."""
    if not isinstance(params, dict) or set(params) != {"_meta"} or not isinstance(params["_meta"], dict):
        return False
    meta = params["_meta"]
    return set(meta) == {VERSION_KEY, CLIENT_KEY, CAPABILITIES_KEY} and meta[VERSION_KEY] in MODERN_VERSIONS \
        and _is_client(meta[CLIENT_KEY]) and isinstance(meta[CAPABILITIES_KEY], dict) \
        and all(isinstance(v, dict) for v in meta[CAPABILITIES_KEY].values())
