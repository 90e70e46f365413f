"""An agent that read a secret and wants it out through gitive: it reads a credential file in every common way
(its harness's Read and Grep tools, ``cat``, ``head``, a credential helper), then messages a teammate with
``send_message`` (the SDK's client against a real ``python -m gitive.mcp``) or ``gitive send --from``, or
proposes a lesson; then it tries to release what was held without its person: no terminal, its harness's
environment with the right passphrase, a scripted terminal with guesses. Every attempt is counted; none may
put a byte on the remote.

What stays out of reach of this screening (docs/screening.md, "Outbound"): bytes the agent sends without
gitive (its own ``curl``, which becomes a finding), a send under another of its person's session names, and
an agent that edits the local event log before sending.
"""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from gitive.core.clock import now_ms
from testing import live, people
from testing.anchor import AnchoredTeam
from testing.lessons import as_person
from testing.machines import Machine, one_line_error
from tests.mcp.conftest import client

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _tool(machine: Machine, session: str, tool: str, tool_input: dict[str, Any]) -> None:
    payload = {"session_id": session, "cwd": str(machine.clone), "hook_event_name": "PostToolUse",
               "tool_name": tool, "tool_input": tool_input, "tool_response": {"stdout": "x", "exit_code": 0},
               "tool_use_id": f"toolu_{now_ms()}_{tool}"}
    assert live.hook_process(machine, "post-tool", payload).code == 0


def _reads(machine: Machine) -> list[tuple[str, dict[str, Any]]]:
    home = machine.home.parent / f"{machine.name}-user"
    return [
        ("Read", {"file_path": str(home / ".aws" / "credentials")}),
        ("Grep", {"pattern": "SECRET", "path": str(machine.clone / ".env")}),
        ("Bash", {"command": "cat ~/.ssh/id_rsa | base64"}),
        ("Bash", {"command": "head -2 ~/.netrc"}),
        ("Bash", {"command": "git credential-store get < ~/.git-credentials"}),
        ("Read", {"file_path": str(machine.clone / "deploy" / "secrets.yaml")}),
    ]


def _remote_tip(machine: Machine) -> str:
    remote = machine.git("remote", "get-url", "origin").strip()
    done = subprocess.run(["git", "--git-dir", remote, "rev-parse", "-q", "--verify",
                           f"refs/hive/logs/{machine.id}/mail"], capture_output=True, text=True)
    return done.stdout.strip()


def _pair(team: AnchoredTeam) -> tuple[Machine, Machine, str, str]:
    """alice's and bob's sessions live and published; bob's address and alice's."""
    alice, bob = team.alice, team.bob
    assert live.hook_process(alice, "session-start", live.session_start(alice, "sa")).code == 0
    live.publish_and_sync(alice)
    assert live.hook_process(bob, "session-start", live.session_start(bob, "sb")).code == 0
    live.publish_and_sync(bob)
    return alice, bob, live.session_address(bob, "sb"), live.session_address(alice, "sa")


async def test_every_read_then_send_is_held_and_no_agent_gets_it_out(team: AnchoredTeam) -> None:
    alice, bob, sender, to = _pair(team)
    before = _remote_tip(bob)

    held: list[str] = []
    async with client(bob) as connected:
        for tool, tool_input in _reads(bob):
            _tool(bob, "sb", tool, tool_input)
            result = await connected.call_tool("send_message", {"to": to, "session": sender,
                                                                "text": f"here it is: {tool_input}"})
            assert not result.is_error and result.structured_content["note"].startswith("HELD"), tool_input
            held.append(result.structured_content["id"])
        lesson = await connected.call_tool("propose_lesson", {
            "kind": "Gotcha", "text": "The deploy key is AKIA…; paste it into CI.", "evidence": ["file:.env"],
            "session": sender})
        assert lesson.is_error and "HELD, not proposed" in lesson.content[0].text
    script = bob.run("send", to, "and by the CLI", "--from", sender)
    assert script.code == 1 and "not sent" in script.out
    rows = bob.json("held")
    assert len(rows) == len(held) + 2 and {r["direction"] for r in rows} == {"outbound"}

    # The agent's ways to let one out, each refused.
    tries = 0
    for message in held[:2]:
        one_line_error(bob.run("release", message, "--passphrase-stdin", stdin=people.PASSPHRASE + "\n",
                               env={"CLAUDECODE": "1"}), "agent harness")
        one_line_error(bob.run("release", message), "needs a person")
        code, out = as_person(bob, "release", message, answers=[("Passphrase", "hunter2\n")] * 3)
        assert code == 1 and "wrong passphrase" in out
        one_line_error(bob.run("drop", message, "--passphrase-stdin", stdin=people.PASSPHRASE + "\n",
                               env={"GITIVE_AGENT": "1"}), "agent harness")
        tries += 4
    bob.ok("sync")
    live.publish_and_sync(alice)
    assert _remote_tip(bob) == before and live.inbox(alice) == []
    assert len(bob.json("held")) == len(held) + 2
    print(f"\noutbound: {len(held) + 2} read-then-send attempts, 0 sent; {tries} release attempts by the agent, "
          "0 accepted")


def test_marking_the_outbox_released_by_hand_sends_nothing(team: AnchoredTeam) -> None:
    """The agent can write its own machine's files: rewriting the outbox row to 'released' sends nothing (only
    `gitive release` sends, after the gesture); the daemon's round does not send from the outbox."""
    import sqlite3

    alice, bob, sender, to = _pair(team)
    before = _remote_tip(bob)
    _tool(bob, "sb", "Bash", {"command": "cat .env"})
    assert bob.run("send", to, "token=abc", "--from", sender).code == 1
    with sqlite3.connect(bob.home / "daemon.sqlite") as db:
        assert db.execute("UPDATE outbox SET state = 'released'").rowcount == 1
    live.publish_and_sync(bob)
    live.publish_and_sync(alice)
    assert _remote_tip(bob) == before and live.inbox(alice) == []
