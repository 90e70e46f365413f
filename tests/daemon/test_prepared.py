"""The daemon prepares what a session's hooks carry, with a real daemon (``gitive daemon start``) and the real
``gitive-hook``: the card and a cited file's lesson come from the files it prepared (``via: prepared``), a
prompt's lesson is ranked by the daemon the moment the hook tells it (``via: daemon``), and with the daemon
stopped the hook computes the same answers itself (``via: computed``), under the load generator too.
"""

from __future__ import annotations

import contextlib
import json

import pytest

from gitive.capture import events, spool
from testing import live
from testing.lessons import PASSPHRASE_ANSWER, as_person, confirmed, propose
from testing.load import cpu_load
from testing.machines import Machine

TEXT = ("The payments sandbox drops about 1 in 20 calls: keep RETRIES at 3 in payments/client.py or the "
        "integration tests flake.")
PROMPT = "why do the integration tests flake around the payments sandbox?"


@pytest.fixture
def with_lesson(pair: list[Machine]) -> tuple[Machine, str]:
    """a's repository with a verified lesson citing ``src/app.py`` (proposed by a, approved by b: alice
    founded the team there, so she owns the project and confirms bob)."""
    a, b = pair
    lesson = propose(a, TEXT, evidence=("file:src/app.py",))
    code, out = as_person(a, "project", "confirm", "bob", answers=[("Confirm bob", "y\n"), PASSPHRASE_ANSWER])
    assert code == 0, out
    for m in (a, b):
        m.ok("sync")
    confirmed(b, "review", "approve", lesson)
    b.ok("sync")
    a.ok("sync")
    return a, lesson


def injected(machine: Machine) -> list[tuple[str, str, str]]:
    with live.on(machine):
        return [(e["lesson"]["id"], e["delivery"]["hook"], e["delivery"]["via"])
                for e in events.read(actions=("team.lesson.injected",))]


def prompt(machine: Machine, session: str, text: str) -> dict:
    return {"session_id": session, "cwd": str(machine.clone), "hook_event_name": "UserPromptSubmit",
            "prompt": text}


def prepared_for(machine: Machine) -> bool:
    with live.on(machine):
        return spool.daemon_alive() and spool.files_complete(machine.clone) and spool.card(machine.clone) is not None


def session(machine: Machine, name: str) -> list[str]:
    """A session's start, a prompt that calls for the lesson, an edit of the cited file: each reply."""
    outs = []
    for kind, payload in (("session-start", live.session_start(machine, name)),
                          ("prompt", prompt(machine, name, PROMPT)),
                          ("post-tool", live.edit(machine, name, "src/app.py"))):
        run = live.hook_process(machine, kind, payload)
        assert run.code == 0, run
        outs.append(live.context_of(run.out) or "")
    return outs


@pytest.mark.parametrize("loaded", [False, True], ids=["idle", "load"])
def test_a_daemon_prepares_the_card_the_file_match_and_ranks_the_prompt(with_lesson: tuple[Machine, str],
                                                                        loaded: bool) -> None:
    a, lesson = with_lesson
    frame = f'<team-memory id="{lesson[:16]}"'
    with live.real_daemon(a, interval=1):
        live.wait_for(lambda: prepared_for(a), "the daemon's card and file matches", timeout=60)
        with cpu_load(per_core=2, seconds=300) if loaded else contextlib.nullcontext():
            card = live.hook_process(a, "session-start", live.session_start(a, "s-card")).out
            first = live.hook_process(a, "prompt", prompt(a, "s-prompt", PROMPT)).out
            edit = live.hook_process(a, "post-tool", live.edit(a, "s-edit", "src/app.py")).out
    assert frame in (live.context_of(card) or "")  # the card, from the file the daemon prepared
    assert frame in (live.context_of(first) or "")
    assert json.loads(first)["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert frame in (live.context_of(edit) or "")
    seen = injected(a)
    assert (lesson, "session-start", "prepared") in seen
    assert (lesson, "prompt", "daemon") in seen  # ranked by the daemon, carried through the spool
    assert (lesson, "post-tool", "prepared") in seen
    with live.on(a):
        missed = list(events.read(actions=("delivery.missed",)))
    assert missed == [], missed


def test_without_a_daemon_the_hook_computes_the_same_answers(with_lesson: tuple[Machine, str]) -> None:
    a, lesson = with_lesson
    frame = f'<team-memory id="{lesson[:16]}"'
    card, asked, edit = session(a, "s-alone")
    assert frame in card and frame not in asked and frame not in edit  # shown once in a session
    first = live.hook_process(a, "prompt", prompt(a, "s-alone-2", PROMPT))
    assert frame in (live.context_of(first.out) or "")
    vias = {(hook, via) for lid, hook, via in injected(a) if lid == lesson}
    assert vias == {("session-start", "computed"), ("prompt", "computed")}

