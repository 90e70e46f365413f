"""Real Codex CLI (``codex exec``, pinned in ``testing/harness/install.py``) in alice's clone after ``gitive
install``, against the scripted model speaking the Responses API: what the model receives.

Trust is set the way a user sets it once, in the test's own ``$CODEX_HOME/config.toml``: the clone is a trusted
project and gitive's MCP server is ``required`` (``testing/harness/codex.py``). Codex runs project hooks only
once a person reviewed them in ``/hooks``; a headless run passes ``--dangerously-bypass-hook-trust`` instead,
and without it the hooks silently do not run (the second test).

Codex puts hook context in ``developer``-role input items of their own, never in the user's message; it offers
an MCP server's tools as one ``namespace`` tool (``mcp__gitive``) holding each tool.
"""

from __future__ import annotations

import json

from testing.harness import codex
from testing.harness.claims import CARD_HEAD, Claims, first_with, gitive_marks, roles_of
from testing.harness.script import Call, Script, Text
from testing.harness.server import ModelServer
from testing.harness.team import Team, install
from testing.load import cpu_load

PROMPT = "Why do the integration tests flake around net/retry.py?"
FINAL = "Done: the flake is the wall clock."
SEARCH = "RetryPolicy wall clock"


def _namespace_tools(body: object, namespace: str) -> list[str]:
    """The tools a Responses request offers inside ``namespace`` (how Codex offers an MCP server's tools)."""
    tools = body.get("tools") if isinstance(body, dict) else None
    return sorted(str(t.get("name")) for n in tools or [] if isinstance(n, dict) and n.get("name") == namespace
                  for t in n.get("tools") or [] if isinstance(t, dict))


def test_a_codex_session_gets_the_card_the_prompts_lesson_and_an_mcp_result(team: Team, model: ModelServer,
                                                                           codex_bin: object) -> None:
    install(team.alice, "codex")
    model.script = Script([Call("mcp__gitive.search_memory", {"query": SEARCH}), Text(FINAL)])
    with cpu_load(per_core=2, seconds=300) as load:
        run = codex.session(model, team.alice.clone, team.harness_home("codex"), team.alice.home, PROMPT)
    claims = Claims(run, "load" if load.count else "idle")
    views, turns = run.views(), run.agent_turns()
    claims.check("exits 0 with the script's answer", run.code == 0 and FINAL in run.out, f"exit {run.code}")
    claims.check("asked the model once per step, nothing after the final answer (nothing at Stop)",
                 len(views) == len(model.script.steps), f"{len(views)} agent requests")
    card, retry = team.card(), team.lesson("retry")
    first = views[0] if views else None
    claims.check("the card is in the first request", first is not None and CARD_HEAD in first.joined()
                 and all(f'id="{c.short}"' in first.joined() and c.text in first.joined() for c in card))
    claims.check("the card arrives as a developer-role item", first is not None and roles_of(first, CARD_HEAD) ==
                 ["developer"], str(first and roles_of(first, CARD_HEAD)))
    claims.check("the prompt's lesson (prompt-time recall) is in the first request, as a developer-role item",
                 first is not None and roles_of(first, retry.text) == ["developer"],
                 str(first and roles_of(first, retry.text)))
    offered = _namespace_tools(turns[0].body, "mcp__gitive") if turns else []
    claims.check("gitive's MCP tools are offered in the first request (required = true)",
                 {"search_memory", "send_message", "get_memory_context"} <= set(offered), str(offered))
    came_back = len(views) > 1 and any(s.role == "tool" and '"results"' in s.text and retry.text in s.text
                                       for s in views[1].segments)
    claims.check("the MCP tool's result comes back in the next request", came_back)
    claims.check("an unreviewed lesson never reaches the model",
                 first_with(views, team.lesson("unreviewed").text) is None)
    texts = [c.text for c in [*card, retry]]
    leaks = [m for v in views for s in v.segments if s.role == "user" for m in gitive_marks(s.text, texts)]
    claims.check("nothing from gitive in user-role text", not leaks, json.dumps(leaks[:5]))
    claims.check("the script's own steps raised nothing", not model.script.errors, str(model.script.errors))
    claims.verify()


def test_codex_runs_no_unreviewed_hook_and_says_nothing(team: Team, model: ModelServer, codex_bin: object) -> None:
    """What ``gitive install`` and ``gitive status`` warn about: without the ``/hooks`` review (here: without
    the bypass), Codex runs none of gitive's hooks, and neither the model nor the user is told."""
    install(team.alice, "codex")
    model.script = Script([Text("hi")])
    run = codex.session(model, team.alice.clone, team.harness_home("codex"), team.alice.home, "say hi",
                        bypass_hook_trust=False)
    claims = Claims(run, "idle")
    views = run.views()
    claims.check("exits 0", run.code == 0, f"exit {run.code}")
    claims.check("no card reaches the model: the hooks did not run", bool(views) and all(
        CARD_HEAD not in v.joined() for v in views), f"{len(views)} requests")
    claims.verify()
