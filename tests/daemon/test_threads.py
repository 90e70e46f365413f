"""Message threads through the real CLI: ``gitive send --reply ID`` answers a message (to its sender, the
address may be left out), and ``gitive inbox --thread ID`` shows the thread among the messages this person may
read; a message between two other people is never in it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from testing import live
from testing.machines import Machine, one_line_error


@pytest.fixture
def ready(pair: list[Machine]) -> Iterator[tuple[Machine, Machine, Any]]:
    """alice's and bob's live sessions (a-claude, b-claude), published and seen by both; alice's daemon service
    in-process."""
    a, b = pair
    for machine, session in ((a, "sa"), (b, "sb")):
        assert live.hook(machine, "session-start", live.session_start(machine, session)) == "{}"
        assert live.hook(machine, "post-tool", live.edit(machine, session, "src/app.py")) == "{}"
        live.publish_and_sync(machine)
    a.ok("sync")
    b.ok("sync")
    with live.serving(a) as service:
        yield a, b, service


def test_a_reply_joins_the_thread_and_goes_to_the_sender(ready: tuple[Machine, Machine, Any]) -> None:
    a, b, service = ready
    [question] = live.send_many(b, "alice/a-claude", [("bob/b-claude", "did you change the token format?")])
    b.ok("sync")
    service.sync(only_due=False)
    answer = a.json("send", "--reply", question[:10], "yes, v2 since Monday", "--from", "alice/a-claude")
    assert [r["address"] for r in answer["recipients"]] == ["bob/b-claude"]  # to the sender of the question
    shown = a.json("inbox", "--thread", question[:10])
    assert [(m["id"], m["direction"], m["depth"]) for m in shown] == [
        (question, "received", 0), (answer["id"], "sent", 1)]
    assert a.json("inbox", "--thread", answer["id"])[0]["id"] == question  # from any message: the same thread
    text = a.ok("inbox", "--thread", question).out
    assert "did you change the token format?" in text and "  " + answer["id"] in text  # the answer indented
    one_line_error(a.run("inbox", "--thread", "01ZZZZZZZZ"), "no message you may read")
    one_line_error(a.run("send", "--reply", "01ZZZZZZZZ", "text", "--from", "alice/a-claude"),
                   "no message you may read")
