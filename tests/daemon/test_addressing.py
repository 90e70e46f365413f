"""Addressing rules of ``gitive.daemon.addressing.resolve`` over a directory of sessions (hive-overview part 1 §3)."""

from __future__ import annotations

from typing import Any

import pytest

from gitive.daemon.addressing import AddressError, Recipient, is_group, resolve

LAPTOP, DESKTOP, BOB_BOX, CAROL_BOX = "a1" * 32, "a2" * 32, "b1" * 32, "c1" * 32
PERSONS = {"alice", "bob", "carol"}


def row(person: str, name: str, machine: str, machine_name: str, *, live: bool = True, repo: str | None = None,
        last_seen: int = 1_000) -> dict[str, Any]:
    return {"person": person, "name": name, "address": f"{person}/{name}", "machine": machine,
            "machine_name": machine_name, "live": live, "repo_label": repo, "last_seen": last_seen}


DIRECTORY = [
    row("alice", "api-claude", LAPTOP, "laptop", repo="api"),
    row("alice", "web-codex", DESKTOP, "desktop", repo="web"),
    row("alice", "old-cursor", DESKTOP, "desktop", live=False, repo="api"),
    row("bob", "api-codex", BOB_BOX, "bobbox", repo="api"),
    row("bob", "docs-claude", BOB_BOX, "bobbox", repo="docs"),
    row("carol", "web-claude", CAROL_BOX, "carolbox", repo="web"),
]


def addresses(found: list[Recipient]) -> list[str]:
    return sorted(r.address for r in found)


def agent(address: str, directory: list[dict[str, Any]] = DIRECTORY, sender: str = "bob/api-codex"
          ) -> list[Recipient]:
    return resolve(address, directory, PERSONS, sender_is_person=False, sender=sender)


def person(address: str, directory: list[dict[str, Any]] = DIRECTORY, sender: str = "bob/terminal"
           ) -> list[Recipient]:
    return resolve(address, directory, PERSONS, sender_is_person=True, sender=sender)


def test_resolve_person_slash_session_names_one_session() -> None:
    assert agent("alice/api-claude") == [Recipient(LAPTOP, "api-claude", "alice/api-claude")]


def test_resolve_at_machine_picks_the_session_on_that_machine() -> None:
    twins = [row("alice", "api-claude", LAPTOP, "laptop"), row("alice", "api-claude", DESKTOP, "desktop")]
    assert agent("alice/api-claude@desktop", twins) == [Recipient(DESKTOP, "api-claude", "alice/api-claude")]
    assert agent("alice/api-claude@laptop", twins)[0].machine == LAPTOP
    # A machine id prefix works as well as its name.
    assert agent(f"alice/api-claude@{DESKTOP[:8]}", twins)[0].machine == DESKTOP


def test_resolve_at_unknown_machine_is_refused() -> None:
    with pytest.raises(AddressError, match="no session answers"):
        agent("alice/api-claude@nowhere")


def test_resolve_bare_session_name_unique_in_team() -> None:
    assert addresses(agent("docs-claude", sender="alice/api-claude")) == ["bob/docs-claude"]


def test_resolve_bare_person_refused_listing_their_live_sessions() -> None:
    with pytest.raises(AddressError) as caught:
        agent("alice")
    message = str(caught.value)
    assert "messages go to sessions, not people" in message
    assert "alice/api-claude" in message and "alice/web-codex" in message
    assert "old-cursor" not in message  # only live sessions are offered


def test_resolve_bare_person_with_nothing_live_says_so() -> None:
    quiet = [row("carol", "web-claude", CAROL_BOX, "carolbox", live=False)]
    with pytest.raises(AddressError, match=r"carol's sessions: none is live now"):
        person("carol", quiet)


@pytest.mark.parametrize("group", ["alice/*", "repo:api", "repo:acme/api", "*"])
def test_resolve_group_address_refused_for_an_agent(group: str) -> None:
    assert is_group(group)
    with pytest.raises(AddressError, match="agents message one session, not a group"):
        agent(group)


def test_resolve_person_star_is_every_live_session_of_that_person() -> None:
    assert addresses(person("alice/*")) == ["alice/api-claude", "alice/web-codex"]


def test_resolve_repo_by_name_or_owner_slash_name() -> None:
    assert addresses(person("repo:api", sender="carol/terminal")) == [
        "alice/api-claude", "bob/api-codex"]  # not alice/old-cursor: quiet
    assert addresses(person("repo:acme/api", sender="carol/terminal")) == ["alice/api-claude", "bob/api-codex"]
    assert addresses(person("repo:WEB", sender="bob/terminal")) == ["alice/web-codex", "carol/web-claude"]
    with pytest.raises(AddressError, match="no session answers"):
        person("repo:nothing")


def test_resolve_star_is_every_live_session_but_the_sender() -> None:
    assert addresses(person("*", sender="bob/api-codex")) == [
        "alice/api-claude", "alice/web-codex", "bob/docs-claude", "carol/web-claude"]


def test_resolve_group_never_includes_the_sender() -> None:
    assert "bob/api-codex" not in addresses(person("repo:api", sender="bob/api-codex"))
    assert addresses(person("bob/*", sender="bob/docs-claude")) == ["bob/api-codex"]


def test_resolve_sender_cannot_address_itself() -> None:
    with pytest.raises(AddressError, match="no session answers"):
        agent("bob/api-codex", sender="bob/api-codex")


def test_resolve_ambiguous_name_lists_options_with_machines() -> None:
    twins = [row("alice", "api-claude", LAPTOP, "laptop"), row("bob", "api-claude", BOB_BOX, "bobbox")]
    with pytest.raises(AddressError) as caught:
        agent("api-claude", twins, sender="carol/web-claude")
    message = str(caught.value)
    assert "ambiguous" in message
    assert "alice/api-claude@laptop" in message and "bob/api-claude@bobbox" in message


def test_resolve_same_address_live_on_two_machines_is_ambiguous() -> None:
    twins = [row("alice", "api-claude", LAPTOP, "laptop"), row("alice", "api-claude", DESKTOP, "desktop")]
    with pytest.raises(AddressError, match=r"ambiguous.*@laptop.*@desktop|ambiguous.*@desktop.*@laptop"):
        agent("alice/api-claude", twins)


def test_resolve_prefers_the_live_session_among_namesakes() -> None:
    twins = [row("alice", "api-claude", LAPTOP, "laptop", live=False, last_seen=5_000),
             row("alice", "api-claude", DESKTOP, "desktop", live=True, last_seen=1_000)]
    assert agent("alice/api-claude", twins)[0].machine == DESKTOP


def test_resolve_quiet_session_still_reachable_latest_first() -> None:
    quiet = [row("alice", "api-claude", LAPTOP, "laptop", live=False, last_seen=1_000),
             row("alice", "api-claude", DESKTOP, "desktop", live=False, last_seen=9_000)]
    # Mail can queue for a session that is not live now: the most recently seen one gets it.
    assert agent("alice/api-claude", quiet) == [Recipient(DESKTOP, "api-claude", "alice/api-claude")]


def test_resolve_group_of_quiet_sessions_finds_nobody() -> None:
    quiet = [row("alice", "api-claude", LAPTOP, "laptop", live=False)]
    with pytest.raises(AddressError, match="no session answers"):
        person("alice/*", quiet)


@pytest.mark.parametrize("address", ["", "   "])
def test_resolve_empty_address_says_how_to_address(address: str) -> None:
    with pytest.raises(AddressError, match="person/session"):
        agent(address)


def test_resolve_unknown_session_points_at_who() -> None:
    with pytest.raises(AddressError, match="gitive who"):
        agent("alice/nope")
    with pytest.raises(AddressError, match="gitive who"):
        agent("nope")


def test_resolve_strips_surrounding_whitespace() -> None:
    assert addresses(agent("  alice/api-claude \n")) == ["alice/api-claude"]
