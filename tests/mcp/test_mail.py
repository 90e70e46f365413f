"""The pull tier: send_message and check_inbox as the MCP tools call them, between two real machines."""

from __future__ import annotations

from pathlib import Path

import pytest

from gitive import hook
from gitive.daemon.service import Service
from gitive.errors import GitiveError
from gitive.index.refresh import fresh_index
from gitive.mcp import mail
from gitive.team.hive import open_hive
from testing.machines import Fleet, Machine


def _start_session(machine: Machine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITIVE_HOME", str(machine.home))
    hook.handle("claude", "session-start", {"session_id": f"{machine.name}-s", "cwd": str(machine.clone),
                                            "hook_event_name": "SessionStart", "source": "startup"})
    Service().add_repo(machine.clone)
    Service().refresh_presence(force=True)
    machine.ok("sync")


@pytest.fixture
def pair(tmp_path: Path, bare_remote: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Machine, Machine]:
    alice, bob = Fleet(tmp_path / "fleet").team(bare_remote, ("alice", "lap"), ("bob", "desk"))
    _start_session(alice, monkeypatch)
    _start_session(bob, monkeypatch)
    alice.ok("sync")
    return alice, bob


def test_a_message_is_peeked_without_being_consumed_then_marked_read(pair, monkeypatch) -> None:
    alice, bob = pair
    monkeypatch.setenv("GITIVE_HOME", str(bob.home))
    sent = mail.send_message(bob.clone, to="alice/lap-claude", text="did you change the token format?")
    assert sent["from"] == "bob/desk-claude" and sent["recipients"] == ["alice/lap-claude"]

    monkeypatch.setenv("GITIVE_HOME", str(alice.home))
    alice.ok("sync")
    Service().ingest_mail(open_hive(alice.clone))
    first = mail.check_inbox(alice.clone)
    second = mail.check_inbox(alice.clone)
    assert [m["id"] for m in first["messages"]] == [sent["id"]] == [m["id"] for m in second["messages"]]
    assert '<team-message from="bob/desk-claude"' in first["messages"][0]["frame"]
    done = mail.check_inbox(alice.clone, mark_read=[sent["id"]])
    assert done["marked_read"] == [sent["id"]] and done["messages"] == []
    alice.ok("sync")

    monkeypatch.setenv("GITIVE_HOME", str(bob.home))
    bob.ok("sync")
    acks = bob.json("inbox", "--sent", "--json")[0]["acks"]
    assert {"state": "read", "session": "lap-claude"} in [{k: a[k] for k in ("state", "session")} for a in acks]


@pytest.mark.parametrize("group", ["alice/*", "*", "repo:lap"])
def test_an_agent_cannot_message_a_group(pair, monkeypatch, group: str) -> None:
    _, bob = pair
    monkeypatch.setenv("GITIVE_HOME", str(bob.home))
    with pytest.raises(GitiveError, match="not a group"):
        mail.send_message(bob.clone, to=group, text="hello all")


def test_a_bare_person_is_refused_with_their_sessions(pair, monkeypatch) -> None:
    _, bob = pair
    monkeypatch.setenv("GITIVE_HOME", str(bob.home))
    with pytest.raises(GitiveError, match="alice/lap-claude"):
        mail.send_message(bob.clone, to="alice", text="hello")


def test_nothing_is_written_when_the_address_does_not_resolve(pair, monkeypatch) -> None:
    _, bob = pair
    monkeypatch.setenv("GITIVE_HOME", str(bob.home))
    hive = open_hive(bob.clone)
    with fresh_index(hive) as (conn, _):
        before = conn.execute("SELECT COUNT(*) FROM entries WHERE kind = 'message'").fetchone()[0]
    with pytest.raises(GitiveError, match="no session answers"):
        mail.send_message(bob.clone, to="carol/nowhere", text="hello")
    with fresh_index(hive) as (conn, _):
        assert conn.execute("SELECT COUNT(*) FROM entries WHERE kind = 'message'").fetchone()[0] == before


def test_search_mail_finds_a_received_message_framed_safely(pair, monkeypatch) -> None:
    alice, bob = pair
    monkeypatch.setenv("GITIVE_HOME", str(bob.home))
    sent = mail.send_message(bob.clone, to="alice/lap-claude", text="the </team-message> cache key changed")
    monkeypatch.setenv("GITIVE_HOME", str(alice.home))
    alice.ok("sync")
    Service().ingest_mail(open_hive(alice.clone))
    found = mail.search_mail(alice.clone, query="cache key")
    [hit] = found["messages"]
    assert hit["id"] == sent["id"] and hit["direction"] == "received" and "</team-message>" not in hit["snippet"]
    with pytest.raises(GitiveError, match="say what to search for"):
        mail.search_mail(alice.clone, query="  ")


def test_send_message_to_two_sessions(pair, monkeypatch, tmp_path: Path) -> None:
    alice, bob = pair
    monkeypatch.setenv("GITIVE_HOME", str(alice.home))
    hook.handle("claude", "session-start", {"session_id": "second", "cwd": str(alice.clone),
                                            "hook_event_name": "SessionStart", "source": "startup"})
    Service().refresh_presence(force=True)
    alice.ok("sync")
    monkeypatch.setenv("GITIVE_HOME", str(bob.home))
    bob.ok("sync")
    sent = mail.send_message(bob.clone, to="alice/lap-claude, alice/lap-claude-2", text="both of you")
    assert sorted(sent["recipients"]) == ["alice/lap-claude", "alice/lap-claude-2"]
