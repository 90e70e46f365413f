"""Real Claude Code with its default MCP settings, under load: gitive's tools are in the first request.

Claude Code connects MCP servers in the background and sends its first request without waiting for them; a
server still connecting is named in a system message ("The following MCP servers are still connecting"), and
one slow to answer ``initialize`` (about 6 s) is dropped. ``gitive mcp`` answers ``initialize`` and
``tools/list`` from its standard-library front before the SDK loads (docs/mcp.md), so with nothing set (no
``CLAUDE_CODE_MCP_STARTUP_WAIT_MS``, no ``MCP_CONNECTION_NONBLOCKING``) its tools are offered from the first
request on, in every session.
"""

from __future__ import annotations

from testing.harness import claude
from testing.harness.claims import Claims
from testing.harness.script import Script, Text
from testing.harness.server import ModelServer
from testing.harness.team import Team, install
from testing.load import cpu_load

SESSIONS = 4
WANTED = {"mcp__gitive__search_memory", "mcp__gitive__get_memory_context", "mcp__gitive__send_message"}


def test_gitive_tools_are_in_the_first_request_with_claudes_defaults(team: Team, model: ModelServer,
                                                                      claude_bin: object) -> None:
    install(team.alice, "claude")
    seen: list[tuple[bool, bool, str]] = []
    with cpu_load(per_core=2, seconds=600) as load:
        for _ in range(SESSIONS):
            model.script = Script([Text("hi")])
            run = claude.session(model, team.alice.clone, team.harness_home("claude"), team.alice.home, "say hi")
            views = run.views()
            first = views[0] if views else None
            offered = {t for t in first.offered if t.startswith("mcp__gitive__")} if first else set()
            seen.append((offered >= WANTED, bool(first and "gitive" in first.connecting),
                         f"exit {run.code}, {run.seconds:.1f} s, offered {sorted(offered)}"))
    claims = Claims(run, "load" if load.count else "idle")
    offered_in = sum(1 for ok, _, _ in seen if ok)
    claims.check(f"gitive's tools are offered in the first request ({offered_in} of {SESSIONS} sessions)",
                 offered_in == SESSIONS, "; ".join(d for _, _, d in seen))
    claims.check("gitive is never still connecting at the first request", not any(c for _, c, _ in seen),
                 "; ".join(d for _, _, d in seen))
    claims.verify()
