"""Real Claude Code (``claude -p``) with alice's daemon running: a message bob sends while alice's agent works
reaches the model in a request of the same session, once, as a system-role turn, under load.

The message is sent while the model "thinks" about its first reply (the script's ``before``), so it is on the
remote before Claude runs the tool; alice's daemon (live session: mail probed every 2 s) fetches it and spools
it for the session, and the PostToolUse hook after the tool carries it. The promise (docs/daemon.md,
"bounded lateness") is that it reaches the model within two calls of arriving; the test records which request it
came in and holds it to that bound.
"""

from __future__ import annotations

import json
from typing import Any

from testing import live
from testing.harness import claude
from testing.harness.claims import Claims, first_with, gitive_marks, roles_of
from testing.harness.script import Call, Script, Text
from testing.harness.server import ModelServer
from testing.harness.team import Team, install
from testing.load import cpu_load

PROMPT = "Check the build, then tell me it is done."
FINAL = "Done: the build is fine."
BODY = "heads-up from bob: the staging database is read-only until 14:00, do not run migrations"


def _alice_session(team: Team) -> str | None:
    team.bob.ok("sync")
    found = sorted(a for a in live.addresses(team.bob.json("who")) if a.startswith("alice/"))
    return found[0] if found else None


def test_a_message_sent_during_a_turn_reaches_the_model_within_two_calls(team: Team, model: ModelServer,
                                                                         claude_bin: object) -> None:
    install(team.alice, "claude")
    sent: dict[str, Any] = {}

    def bob_sends() -> None:
        """Bob sees alice's live session through her daemon's presence, then sends to it (the CLI pushes)."""
        live.wait_for(lambda: _alice_session(team) is not None, "alice's session seen by bob", every=0.5,
                      timeout=90)
        sent["to"] = _alice_session(team)
        sent["id"] = team.bob.json("send", sent["to"], BODY, "--from", "bob/bob-claude")["id"]

    model.script = Script([
        Call("Bash", {"command": "sleep 8", "description": "wait for the build"}, before=bob_sends),
        Call("Bash", {"command": "true", "description": "check the build"}),
        Text(FINAL),
    ])
    with live.real_daemon(team.alice, interval=1), cpu_load(per_core=2, seconds=300) as load:
        run = claude.session(model, team.alice.clone, team.harness_home("claude"), team.alice.home, PROMPT)
    claims = Claims(run, "load" if load.count else "idle")
    views = run.views()
    claims.check("exits 0 with the script's answer", run.code == 0 and FINAL in run.out, f"exit {run.code}")
    claims.check("bob sent the message during the turn", "id" in sent, str(model.script.errors))
    at = first_with(views, BODY)
    claims.check("the message is not in the first request (it was sent after it)",
                 at is None or at >= 1, f"first in {at}")
    claims.check("the message reaches the model within two calls of the send", at in (1, 2), f"first in {at}")
    claims.check("it arrives as a system-role turn", at is not None and roles_of(views[at], BODY) == ["system"],
                 str(at is not None and roles_of(views[at], BODY)))
    carried = [i for i, v in enumerate(views) if BODY in v.joined()]
    claims.check("it is carried once: every later request holds that same one turn, no second copy",
                 at is not None and all(views[i].joined().count(BODY) == 1 for i in carried), str(carried))
    claims.check("the frame names bob's session", at is not None and "bob/bob-claude" in views[at].joined())
    leaks = [m for v in views for s in v.segments if s.role == "user" for m in gitive_marks(s.text, [BODY])]
    claims.check("nothing from gitive in user-role text", not leaks, json.dumps(leaks[:5]))
    claims.check("the script's own steps raised nothing", not model.script.errors, str(model.script.errors))
    claims.verify()
