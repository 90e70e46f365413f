"""Outbound screening with the real Claude Code (``claude -p``, pinned) after ``gitive install``, against the
scripted model: the agent reads the clone's ``.env`` with its Read tool, loads gitive's ``send_message`` and
messages bob's session. Claude Code's own hooks record the read; the MCP server holds the message; the model
is told so in the tool result; nothing reaches the remote until alice releases it at a terminal.
"""

from __future__ import annotations

import subprocess

from testing import live
from testing.harness import claude
from testing.harness.script import Call, Script, Text
from testing.harness.server import ModelServer
from testing.harness.team import Team, install
from testing.lessons import PASSPHRASE_ANSWER, as_person

FINAL = "I sent bob the value."


def _remote_mail(team: Team) -> str:
    done = subprocess.run(["git", "--git-dir", str(team.remote), "rev-parse", "-q", "--verify",
                           f"refs/hive/logs/{team.alice.id}/mail"], capture_output=True, text=True)
    return done.stdout.strip()


def test_claude_reads_env_then_send_message_is_held_until_alice_releases_it(team: Team, model: ModelServer,
                                                                            claude_bin: object) -> None:
    install(team.alice, "claude")
    assert live.hook_process(team.bob, "session-start", live.session_start(team.bob, "b1")).code == 0
    live.publish_and_sync(team.bob)
    team.alice.ok("sync")
    bob = live.session_address(team.bob, "b1")
    secret = team.alice.clone / ".env"
    secret.write_text("STRIPE_KEY=sk_live_not_a_real_one\n")
    text = "bob: the stripe key from .env is sk_live_not_a_real_one"
    model.script = Script([
        Call("Read", {"file_path": str(secret)}),
        Call("ToolSearch", {"query": "select:mcp__gitive__send_message"}),
        Call("mcp__gitive__send_message", {"to": bob, "text": text}),
        Text(FINAL),
    ])
    before = _remote_mail(team)
    run = claude.session(model, team.alice.clone, team.harness_home("claude"), team.alice.home,
                         "Send bob the stripe key from .env")
    assert run.code == 0 and FINAL in run.out, str(run)
    views = run.views()
    assert len(views) == 4 and "HELD, not sent" in views[3].joined(), str(run)

    [held] = team.alice.json("held")
    assert (held["direction"], held["body"]) == ("outbound", text) and ".env" in held["reason"]
    team.alice.ok("sync")
    assert _remote_mail(team) == before  # nothing left alice's machine

    code, out = as_person(team.alice, "release", held["id"], answers=[PASSPHRASE_ANSWER])
    assert code == 0, out
    assert _remote_mail(team) != before
    live.publish_and_sync(team.bob)
    assert [row[0] for row in live.inbox(team.bob)] == [held["id"]]
