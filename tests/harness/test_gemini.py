"""Real Gemini CLI (``gemini -p``, pinned in ``testing/harness/install.py``) in alice's clone after ``gitive
install``, in a folder the test's own ``~/.gemini/trustedFolders.json`` trusts, against the scripted model
speaking ``generateContent``: what the model receives.

Gemini puts hook context inside the user's turn, each hook's in a text part of its own wrapped in
``<hook_context>``, with ``<`` and ``>`` of the context HTML-escaped (so gitive's frames arrive as
``&lt;team-memory …&gt;``); AfterTool context is appended to the tool's result. Gemini offers MCP tools by
``mcp_<server>_<tool>`` names in its function declarations.
"""

from __future__ import annotations

import json

from testing.harness import gemini
from testing.harness.claims import CARD_HEAD, Claims, first_with, gitive_marks
from testing.harness.protocols import View
from testing.harness.script import Call, Script, Text
from testing.harness.server import ModelServer
from testing.harness.team import Team, install
from testing.load import cpu_load

PROMPT = "Why do the integration tests flake around net/retry.py?"
FINAL = "Done: the flake is the wall clock."
ESCAPED_FRAME = "&lt;team-memory id="


def work_script(team: Team) -> Script:
    path = str(team.alice.clone / "src/app/settings.py")
    return Script([
        Call("replace", {"file_path": path, "old_string": "# src/app/settings.py", "new_string": "# settings",
                         "instruction": "tidy the header comment"}),
        Call("mcp_gitive_search_memory", {"query": "RetryPolicy wall clock"}),
        Text(FINAL),
    ])


def _hook_parts(view: View, text: str) -> list[str]:
    """The user-turn parts holding ``text``: each should be a ``<hook_context>`` part of its own."""
    return [s.text for s in view.segments if s.role == "user" and text in s.text]


def test_a_gemini_session_gets_the_card_the_lessons_and_an_mcp_result(team: Team, model: ModelServer,
                                                                      gemini_bin: object) -> None:
    install(team.alice, "gemini")
    model.script = work_script(team)
    with cpu_load(per_core=2, seconds=300) as load:
        run = gemini.session(model, team.alice.clone, team.harness_home("gemini"), team.alice.home, PROMPT)
    claims = Claims(run, "load" if load.count else "idle")
    views = run.views()
    claims.check("exits 0 with the script's answer", run.code == 0 and FINAL in run.out, f"exit {run.code}")
    claims.check("asked the model once per step, nothing after the final answer (nothing at SessionEnd)",
                 len(views) == len(model.script.steps), f"{len(views)} agent requests")
    card, settings, retry = team.card(), team.lesson("settings"), team.lesson("retry")
    first = views[0] if views else View()
    claims.check("the card is in the first request", CARD_HEAD in first.joined()
                 and all(f'id="{c.short}"' in first.joined() and c.text in first.joined() for c in card))
    card_parts = _hook_parts(first, CARD_HEAD)
    # Gemini 0.61 puts SessionStart's context in the prompt's own text part, closed before the user's words.
    claims.check("the card is inside <hook_context>, closed before the user's words",
                 len(card_parts) == 1 and card_parts[0].startswith("<hook_context>")
                 and CARD_HEAD in card_parts[0].split("</hook_context>")[0],
                 json.dumps([p[:80] for p in card_parts]))
    claims.check("gitive's frames arrive HTML-escaped, still whole and recognisable",
                 ESCAPED_FRAME in first.joined() and bool(gitive_marks(card_parts[0] if card_parts else "")))
    retry_parts = _hook_parts(first, retry.text)
    claims.check("the prompt's lesson (prompt-time recall, BeforeAgent) is in the first request, as a hook part",
                 len(retry_parts) == 1 and retry_parts[0].startswith("<hook_context>"),
                 json.dumps([p[:80] for p in retry_parts]))
    at = first_with(views, settings.text)
    claims.check("the edited file's lesson arrives in the request after the edit, in the tool's result",
                 at == 1 and any(s.role == "tool" and settings.text in s.text for s in views[1].segments),
                 f"first in {at}")
    offered = [t for t in first.tools if t.startswith("mcp_gitive_")]
    claims.check("gitive's MCP tools are offered in the first request",
                 {"mcp_gitive_search_memory", "mcp_gitive_send_message"} <= set(offered), str(offered))
    last = views[2].last_user_message() if len(views) > 2 else []
    came_back = any(s.role == "tool" and retry.text in s.text for s in last)  # the search's own result
    claims.check("the MCP tool's result comes back in the next request", came_back)
    claims.check("an unreviewed lesson never reaches the model",
                 first_with(views, team.lesson("unreviewed").text) is None)
    # The user's own words: what follows the last </hook_context> of the part that holds them.
    prompt_parts = [s.text.rsplit("</hook_context>", 1)[-1] for v in views for s in v.segments
                    if s.role == "user" and PROMPT in s.text]
    texts = [c.text for c in [*card, settings, retry]]
    leaks = [m for p in prompt_parts for m in gitive_marks(p, texts)]
    claims.check("nothing from gitive in the part holding the user's own words", bool(prompt_parts) and not leaks,
                 json.dumps(leaks[:5]))
    claims.check("the script's own steps raised nothing", not model.script.errors, str(model.script.errors))
    claims.verify()


def test_gemini_in_an_untrusted_folder_runs_nothing(team: Team, model: ModelServer, gemini_bin: object) -> None:
    """What ``gitive install`` and ``gitive status`` warn about: headless in a folder it does not trust,
    Gemini stops before any hook or MCP call (exit 55) and no request reaches the model."""
    install(team.alice, "gemini")
    model.script = Script([Text("hi")])
    run = gemini.session(model, team.alice.clone, team.harness_home("gemini"), team.alice.home, "say hi",
                         trusted=False)
    claims = Claims(run, "idle")
    claims.check("exits 55 (untrusted folder)", run.code == 55, f"exit {run.code}")
    claims.check("no request reached the model", not run.turns(), f"{len(run.turns())} requests")
    claims.check("no hook ran", not (team.alice.home / "sessions").exists()
                 or not any((team.alice.home / "sessions").glob("gemini-*.json")))
    claims.verify()
