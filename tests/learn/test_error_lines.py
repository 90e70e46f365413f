"""The quiet pass quotes the real error line: real outputs of pytest, Jest, go test and cargo test (captured from
runs of those tools, ``fixtures/runs/cases.yaml`` says how), read alone and end to end through the real hook,
``gitive learn`` and ``gitive learn --list --json``; corrections in a later prompt; drafts a verified lesson
already says."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from gitive.cli.main import run
from gitive.learn import corrections, errors, pairs, review, store
from tests.learn.conftest import FIXTURES, HOOK

RUNS = FIXTURES / "runs"
CASES = yaml.safe_load((RUNS / "cases.yaml").read_text())["cases"]
SESSION = "5d2e9f10-7a3b-4c8d-9e1f-20a4b6c8d0e2"


def _output(case: dict[str, Any]) -> str:
    return (RUNS / case["file"]).read_text()


@pytest.mark.parametrize("case", CASES, ids=[c["file"] for c in CASES])
def test_each_runner_output_gives_its_real_error_line_and_failing_test(case: dict[str, Any]) -> None:
    output = _output(case)
    found = errors.read(output)
    assert found.line == case["line"]
    assert found.test == case["test"]
    assert any(found.line in line for line in output.splitlines()), "the quote is not a verbatim part of a line"
    assert not errors.is_banner(found.line)


def test_banners_are_never_the_error() -> None:
    for banner in ("=================================== FAILURES ===================================",
                   "_____________________ ERROR collecting coll/test_broken.py _____________________",
                   "failures:", "test result: FAILED. 0 passed; 3 failed; 0 ignored; 0 measured; 0 filtered out",
                   "--- FAIL: TestAdd (0.00s)", "FAIL\texample.test/calc\t0.001s", "FAIL ./sum.test.js",
                   "Tests:       4 failed, 4 total", "=========================== short test summary info"):
        assert errors.is_banner(banner), banner
    assert errors.read("=== FAILURES ===\nsomething broke: disk full\n").line == "something broke: disk full"


def _payload(event: str, repo: Path, **fields: Any) -> dict[str, Any]:
    hook = {"session-start": "SessionStart", "prompt": "UserPromptSubmit", "post-tool-failure": "PostToolUseFailure",
            "post-tool": "PostToolUse", "stop": "Stop"}[event]
    return {"event": event, "payload": {"session_id": SESSION, "cwd": str(repo), "hook_event_name": hook,
                                        "transcript_path": f"/tmp/{SESSION}.jsonl", **fields}}


def _bash(n: int, command: str, failed_output: str | None, repo: Path) -> dict[str, Any]:
    base = {"tool_name": "Bash", "tool_input": {"command": command}, "tool_use_id": f"toolu_{n:04d}"}
    if failed_output is None:
        return _payload("post-tool", repo, **base, tool_response={"stdout": "ok\n", "stderr": "", "interrupted": False})
    return _payload("post-tool-failure", repo, **base, error=f"Exit code 1\n{failed_output}", is_interrupt=False)


def _edit(n: int, path: str, repo: Path) -> dict[str, Any]:
    return _payload("post-tool", repo, tool_name="Edit", tool_use_id=f"toolu_e{n:04d}",
                    tool_input={"file_path": f"{repo}/{path}", "old_string": "a - b", "new_string": "a + b"},
                    tool_response={"filePath": f"{repo}/{path}"})


def _feed(items: list[dict[str, Any]], repo: Path) -> None:
    import subprocess

    home = Path(os.environ["GITIVE_HOME"])
    env = {"GITIVE_HOME": str(home), "HOME": str(home.parent), "PATH": "/usr/bin:/bin"}
    for item in items:
        done = subprocess.run([str(HOOK), "claude", item["event"]], input=json.dumps(item["payload"]).encode(),
                              capture_output=True, cwd=repo, env=env, timeout=30)
        assert done.returncode == 0, done.stderr.decode()


def _listed(capsys: pytest.CaptureFixture[str]) -> list[dict[str, Any]]:
    capsys.readouterr()
    assert run(["learn", "--list", "--json"]) == 0
    return [d for d in json.loads(capsys.readouterr().out)["drafts"] if d["kind"] == "lesson"]


def test_every_fixture_run_drafts_a_lesson_quoting_its_real_error_line(team_clone: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    """One session of sixteen failed -> edited -> passed commands, each failure a real runner's output."""
    items = [_payload("session-start", team_clone, source="startup"),
             _payload("prompt", team_clone, prompt="The test suites are red; please fix them.")]
    for n, case in enumerate(CASES):
        command = f"{case['command']} # case {n}"
        items += [_bash(3 * n, command, _output(case), team_clone), _edit(n, "src/app/settings.py", team_clone),
                  _bash(3 * n + 2, command, None, team_clone)]
    _feed([*items, _payload("stop", team_clone, stop_hook_active=False)], team_clone)
    assert run(["learn"]) == 0
    drafts = {d["command"]: d for d in _listed(capsys)}
    for n, case in enumerate(CASES):
        draft = drafts[pairs.normalize_command(f"{case['command']} # case {n}")]
        assert draft["error_line"] == case["line"], case["file"]
        assert draft["failing_test"] == case["test"], case["file"]
        assert len(draft["evidence"]) == 3 and all(e.startswith("event:") for e in draft["evidence"])
        assert case["line"] in draft["text"]  # the skeleton quotes it too
        assert "=====" not in draft["error_line"]


def test_a_correction_in_a_later_prompt_is_drafted_with_the_persons_words(team_clone: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    said = "No, use the sandbox key: the live one texts real customers."
    _feed([_payload("session-start", team_clone, source="startup"),
           _payload("prompt", team_clone, prompt="Send the test SMS to check the template."),
           _bash(1, "TWILIO_KEY=$LIVE_KEY python scripts/send_sms.py", None, team_clone),
           _payload("prompt", team_clone, prompt=f"{said} Then run it again."),
           _bash(2, "TWILIO_KEY=$SANDBOX_KEY python scripts/send_sms.py", None, team_clone),
           _payload("stop", team_clone, stop_hook_active=False)], team_clone)
    assert run(["learn"]) == 0
    (draft,) = [d for d in _listed(capsys) if d["lesson_kind"] == "Correction"]
    assert draft["quote"] == said and said in draft["text"]
    assert "scripts/send_sms.py" in draft["text"] and len(draft["evidence"]) == 2
    with store.connect() as conn:
        stored = store.get(conn, draft["id"])
    lesson = review.accept(stored)
    from gitive.index.refresh import fresh_index
    from gitive.lessons import catalog
    from gitive.team.hive import open_hive

    with fresh_index(open_hive(team_clone)) as (conn, _):
        found = catalog.get(conn, lesson)
    assert found["kind"] == "Correction" and found["state"] == "proposed"
    assert found["quote"]["words"] == said and found["quote"]["speaker"] == "alice"


def test_the_first_prompt_and_bare_refusals_are_not_corrections() -> None:
    assert corrections.in_prompt("No, use the sandbox key. Thanks!") == ["No, use the sandbox key."]
    assert corrections.in_prompt("no") == [] and corrections.in_prompt("No, why did it fail?") == []
    assert corrections.in_prompt("Don't mock the database in these tests, use the db_session fixture.") == [
        "Don't mock the database in these tests, use the db_session fixture."]
    assert corrections.in_prompt("Please add a retry to the webhook sender.") == []
    events = [{"event": {"id": "p1", "action": "prompt.submitted"}, "prompt": {"text": "No, use the sandbox key."},
               "session": {"id": "s"}}]
    assert corrections.in_session(events) == []  # a first prompt states the task


def test_a_draft_a_verified_lesson_already_says_offers_evidence_or_supersede(team_clone: Path,
                                                                             capsys: pytest.CaptureFixture[str]) -> None:
    from gitive.index.refresh import fresh_index
    from gitive.lessons import catalog
    from gitive.lessons.propose import propose
    from gitive.lessons.review import review as approve
    from gitive.team.hive import open_hive
    from testing import people

    hive = open_hive(team_clone)
    with fresh_index(hive) as (conn, _):
        known = propose(hive, conn, kind="Gotcha", text="add() in src/app/settings.py subtracts; tests fail with "
                        "assert -1 == 5 until it adds.", evidence=["file:src/app/settings.py"],
                        symptoms=["assert -1 == 5"]).id
        approve(hive, conn, known, approved=True, note="", signer=people.person_key())
    case = CASES[0]
    _feed([_payload("session-start", team_clone, source="startup"),
           _payload("prompt", team_clone, prompt="Fix the calc tests."),
           _bash(1, case["command"], _output(case), team_clone), _edit(1, "src/app/settings.py", team_clone),
           _bash(2, case["command"], None, team_clone), _payload("stop", team_clone, stop_hook_active=False)],
          team_clone)
    assert run(["learn"]) == 0
    (draft,) = _listed(capsys)
    assert draft["already"]["lesson"] == known and "evidence" in draft["already"]["offer"]
    with store.connect() as conn:
        stored = store.get(conn, draft["id"])
    newer = review.add_evidence(stored, known)
    with fresh_index(open_hive(team_clone)) as (conn, _):
        found = catalog.get(conn, newer)
    assert found["supersedes"] == known and found["state"] == "proposed" and found["text"].startswith("add()")
    assert {e["kind"] for e in found["evidence"]} == {"file", "event"}
