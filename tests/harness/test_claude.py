"""Real Claude Code (``claude -p``, pinned in ``testing/harness/install.py``) in alice's clone after ``gitive
install``, against the scripted model: what the model receives.

Claude Code puts hook context in a ``system``-role message of its own ("SessionStart hook additional context:
…", "PostToolUse:Edit hook additional context: …"), never in the user's turn; MCP tools are offered as
deferred tools, named in a system message and loaded through ``ToolSearch``.
"""

from __future__ import annotations

import json

from testing.harness import claude
from testing.harness.claims import CARD_HEAD, Claims, first_with, gitive_marks, roles_of
from testing.harness.script import Call, Script, Text
from testing.harness.server import ModelServer
from testing.harness.team import Team, install
from testing.load import cpu_load

# The prompt does not name the file: prompt-time recall would bring its lesson with the prompt (request 0),
# and this session checks the lesson an *edit* brings (the prompt's own lesson is the next test's).
PROMPT = "Tidy the header comment of the settings module."
FINAL = "Done: the header comment is tidy."
SEARCH = "why do the integration tests flake around net/retry.py"


def work_script(team: Team) -> Script:
    """Edit a file a lesson cites, load gitive's search tool and call it, then answer."""
    path = str(team.alice.clone / "src/app/settings.py")
    return Script([
        Call("Edit", {"file_path": path, "old_string": "# src/app/settings.py", "new_string": "# settings"}),
        Call("ToolSearch", {"query": "select:mcp__gitive__search_memory"}),
        Call("mcp__gitive__search_memory", {"query": SEARCH}),
        Text(FINAL),
    ])


def test_a_work_session_gets_the_card_the_edit_lesson_and_an_mcp_result(team: Team, model: ModelServer,
                                                                         claude_bin: object) -> None:
    install(team.alice, "claude")
    model.script = work_script(team)
    with cpu_load(per_core=2, seconds=300) as load:
        run = claude.session(model, team.alice.clone, team.harness_home("claude"), team.alice.home, PROMPT)
    claims = Claims(run, "load" if load.count else "idle")
    views = run.views()
    claims.check("exits 0 with the script's answer", run.code == 0 and FINAL in run.out, f"exit {run.code}")
    claims.check("asked the model once per step, nothing after the final answer (nothing at Stop)",
                 len(views) == len(model.script.steps), f"{len(views)} agent requests")
    card, settings, retry = team.card(), team.lesson("settings"), team.lesson("retry")
    first = views[0] if views else None
    claims.check("the card is in the first request", first is not None and CARD_HEAD in first.joined()
                 and all(f'id="{c.short}"' in first.joined() and c.text in first.joined() for c in card))
    claims.check("the card arrives as a system-role turn", first is not None and roles_of(first, CARD_HEAD) ==
                 ["system"], str(first and roles_of(first, CARD_HEAD)))
    at = first_with(views, settings.text)
    claims.check("the edited file's lesson arrives in the request after the edit", at == 1, f"first in {at}")
    claims.check("the edited file's lesson is a system-role turn",
                 at is not None and roles_of(views[at], settings.text) == ["system"])
    found = first_with(views, retry.text)
    claims.check("the MCP tool's result comes back in the next request", found == 3 and "tool" in
                 roles_of(views[3], retry.text), f"first in {found}")
    unreviewed = team.lesson("unreviewed").text
    claims.check("an unreviewed lesson never reaches the model", first_with(views, unreviewed) is None)
    texts = [t for c in [*card, settings, retry] for t in (c.text,)]
    leaks = [m for v in views for s in v.segments if s.role == "user" for m in gitive_marks(s.text, texts)]
    claims.check("nothing from gitive in user-role text", not leaks, json.dumps(leaks[:5]))
    claims.check("the script's own steps raised nothing", not model.script.errors, str(model.script.errors))
    claims.verify()


def test_claude_offers_gitive_tools_as_deferred_tools(team: Team, model: ModelServer, claude_bin: object) -> None:
    """With Claude told to wait for MCP servers before its first request (``CLAUDE_CODE_MCP_STARTUP_WAIT_MS``), gitive's tools are named to
    the model in the first request; what a user gets with Claude's defaults is in test_mcp_first_request.py."""
    install(team.alice, "claude")
    model.script = Script([Text("hi")])
    with cpu_load(per_core=2, seconds=300) as load:
        run = claude.session(model, team.alice.clone, team.harness_home("claude"), team.alice.home, "say hi",
                             extra_env={"CLAUDE_CODE_MCP_STARTUP_WAIT_MS": "30000"})
    claims = Claims(run, "load" if load.count else "idle")
    views = run.views()
    offered = views[0].offered if views else []
    mine = sorted(t for t in offered if t.startswith("mcp__gitive__"))
    claims.check("gitive's MCP tools are offered in the first request",
                 {"mcp__gitive__search_memory", "mcp__gitive__send_message"} <= set(mine), str(mine))
    claims.check("no server is still connecting", not (views and views[0].connecting),
                 str(views and views[0].connecting))
    claims.verify()
