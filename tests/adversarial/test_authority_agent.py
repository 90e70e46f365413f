"""An agent with a shell on its person's machine: it has the machine key, a pty, `script`, the environment,
and guesses; it does not have the person's passphrase. Nothing it does this way writes a decision.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from gitive.lessons.gate import AGENT_ENV
from testing import people
from testing.lessons import GITIVE, PASSPHRASE_ANSWER, as_person, hive_tips, person_env, propose
from testing.machines import Machine, alice_and_bob, one_line_error

GUESSES = ["y", "yes", "password", "hunter2", "alice", "correct horse battery", ""]


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> list[Machine]:
    """alice (admin, founder) and bob, synced; a lesson by bob waiting for alice's review."""
    base = tmp_path_factory.mktemp("agent")
    with alice_and_bob(base) as (alice, bob, _):
        propose(bob, "Run make gen after editing api.proto")
        bob.ok("sync")
        alice.ok("sync")
        yield [alice, bob]


def _pending(alice: Machine) -> str:
    return alice.json("lessons", "list", "--state", "proposed")[0]["id"]


@pytest.mark.skipif(shutil.which("script") is None, reason="util-linux script is not installed")
@pytest.mark.parametrize("guess", ["", "y", "hunter2"])
def test_script_with_a_piped_yes_and_guesses_writes_no_review(team: list[Machine], guess: str) -> None:
    alice, _ = team
    lesson = _pending(alice)
    before = hive_tips(alice)
    env = person_env(alice.home)  # what `env -u CLAUDECODE …` leaves: no harness variable at all
    piped = "y\n" + f"{guess}\n" * 3
    proc = subprocess.run(["script", "-qec", f"{GITIVE} review approve {lesson}", "/dev/null"], cwd=alice.clone,
                          env=env, input=piped.encode(), capture_output=True, timeout=60)
    assert proc.returncode != 0, proc.stdout.decode(errors="replace")
    # the piped "y" got it past the confirmation: only the passphrase stood in the way (the guesses were
    # wrong, or were read by the confirmation's buffered stdin and the terminal then ran dry)
    assert b"Passphrase of your person key" in proc.stdout, proc.stdout.decode(errors="replace")
    assert hive_tips(alice) == before
    assert alice.json("lessons", "show", lesson)["state"] == "proposed"


def test_a_pty_driver_answering_every_prompt_with_guesses_writes_nothing(team: list[Machine]) -> None:
    alice, _ = team
    lesson = _pending(alice)
    before = hive_tips(alice)
    answers = [("Sign this", "y\n")] + [("Passphrase", f"{g}\n") for g in GUESSES[:3]]
    code, out = as_person(alice, "review", "approve", lesson, answers=answers)
    assert code == 1 and "wrong passphrase" in out and "nothing was signed" in out
    assert hive_tips(alice) == before


@pytest.mark.parametrize("argv", [["review", "approve", "{lesson}"], ["invite"], ["team", "remove", "bob"],
                                  ["project", "confirm", "bob"], ["team", "role", "bob", "admin"]])
def test_a_wrong_passphrase_on_stdin_writes_nothing(team: list[Machine], argv: list[str]) -> None:
    alice, _ = team
    args = [a.format(lesson=_pending(alice)) for a in argv]
    before = hive_tips(alice)
    result = alice.run(*args, "--passphrase-stdin", stdin="not the passphrase\n")
    one_line_error(result, "wrong passphrase")
    assert hive_tips(alice) == before


def test_a_passphrase_in_the_environment_is_never_read(team: list[Machine]) -> None:
    alice, _ = team
    before = hive_tips(alice)
    env = {name: people.PASSPHRASE for name in ("GITIVE_PASSPHRASE", "GITIVE_PERSON_PASSPHRASE", "PASSPHRASE")}
    result = alice.run("invite", "--passphrase-stdin", env=env)  # stdin is empty
    one_line_error(result, "standard input is empty")
    assert hive_tips(alice) == before


@pytest.mark.parametrize("variable", [v for v in AGENT_ENV if v.startswith(("CLAUDE", "CODEX_THREAD", "GITIVE"))])
def test_inside_an_agent_harness_even_the_right_passphrase_decides_nothing(team: list[Machine],
                                                                          variable: str) -> None:
    alice, _ = team
    before = hive_tips(alice)
    result = alice.run("team", "remove", "bob", "--passphrase-stdin", env={variable: "1"},
                       stdin=people.PASSPHRASE + "\n")
    one_line_error(result, "agent harness")
    assert hive_tips(alice) == before


def test_a_member_cannot_remove_another_person_even_with_their_own_key(team: list[Machine]) -> None:
    _alice, bob = team
    before = hive_tips(bob)
    result = bob.decide("team", "remove", "alice")
    one_line_error(result, "only an admin", "alice")
    assert hive_tips(bob) == before


def test_the_person_at_the_terminal_decides_with_the_passphrase(tmp_path: Path, team: list[Machine]) -> None:
    alice, _ = team
    lesson = _pending(alice)
    code, out = as_person(alice, "review", "approve", lesson, answers=[("Sign this", "y\n"), PASSPHRASE_ANSWER])
    assert code == 0, out
    assert alice.json("lessons", "show", lesson)["state"] == "verified"
