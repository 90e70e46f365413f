"""The quiet pass end to end: recorded sessions of the four harnesses through the real hook, then ``gitive
learn``; one draft with the right evidence and signature, nothing on any ref before acceptance."""

from __future__ import annotations

import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from gitive.capture import events as event_log
from gitive.cli.main import run
from gitive.learn import drafting, gate, pairs, promises, review, store
from tests.learn.conftest import HARNESSES, all_refs, replay

CMD = "python -m pytest tests/test_settings.py -q"


def _events() -> list[dict[str, Any]]:
    return list(event_log.read())


@pytest.mark.parametrize("harness", HARNESSES)
def test_a_failing_run_an_edit_and_a_passing_run_make_exactly_one_draft(harness: str, team_clone: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    home = Path(os.environ["GITIVE_HOME"])
    before = all_refs(team_clone)
    replay(harness, team_clone, home)
    assert run(["learn"]) == 0
    prompts = harness in ("claude", "codex")  # the two with a prompt hook: their promise is drafted too
    assert f"{2 if prompts else 1} new draft" in capsys.readouterr().out
    with store.connect() as conn:
        drafts = [d for d in store.listing(conn) if d["kind"] == "lesson"]
        stored = store.scores(conn, gate.RUBRIC_HASH)
    assert len(drafts) == 1, drafts
    (draft,) = drafts
    logged = _events()
    fail = next(e for e in logged if (e.get("command") or {}).get("command") == CMD
                and pairs.run_of(e) is not None and pairs.run_of(e)[1] != 0)
    passed = next(e for e in logged if pairs.run_of(e) == (CMD, 0))
    edit = next(e for e in logged if (e.get("file") or {}).get("op") == "modify")
    assert draft["evidence"] == [f"event:{fail['event']['id']}", f"event:{edit['event']['id']}",
                                 f"event:{passed['event']['id']}"]
    assert draft["files"] == ["src/app/settings.py"] and draft["harness"] == harness
    assert draft["signature"] == pairs.signature(CMD, "tests/test_settings.py::test_reload", "AssertionError")
    assert draft["detail"]["test"] == "tests/test_settings.py::test_reload"
    assert draft["writer"] == "skeleton" and CMD in draft["text"] and "src/app/settings.py" in draft["text"]
    assert stored[draft["id"]]["task_success"] == 100 and stored[draft["id"]]["evidence"] == 100
    assert all_refs(team_clone) == before, "the quiet pass wrote to a ref"
    assert run(["learn"]) == 0  # a second pass over the same log drafts nothing new
    with store.connect() as conn:
        assert len([d for d in store.listing(conn) if d["kind"] == "lesson"]) == 1
    assert (home / store.FILE).stat().st_mode & 0o077 == 0


@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_a_promise_in_the_persons_prompt_is_drafted_locally(harness: str, team_clone: Path) -> None:
    replay(harness, team_clone, Path(os.environ["GITIVE_HOME"]))
    drafting.run()
    with store.connect() as conn:
        (promise,) = [d for d in store.listing(conn) if d["kind"] == "obligation"]
    assert promise["text"] == "remove the old SETTINGS_PATH fallback"
    assert promise["applicability"] == "the config migration merges"
    assert promise["detail"]["condition_word"] == "once" and promise["evidence"][0].startswith("event:")
    with pytest.raises(Exception, match="obligations"):
        review.accept(promise)


def test_accepting_proposes_the_lesson_and_only_then_a_ref_moves(team_clone: Path) -> None:
    replay("codex", team_clone, Path(os.environ["GITIVE_HOME"]))
    drafting.run()
    with store.connect() as conn:
        (draft,) = [d for d in store.listing(conn) if d["kind"] == "lesson"]
    before = all_refs(team_clone)
    lesson = review.accept(draft)
    review.decide(draft["id"], "accepted", lesson)
    after = all_refs(team_clone)
    assert after != before and "refs/hive/logs/" in after
    from gitive.index.refresh import fresh_index
    from gitive.lessons import catalog
    from gitive.team.hive import open_hive

    with fresh_index(open_hive(team_clone)) as (conn, _):
        found = catalog.get(conn, lesson)
    # the failure signature rides along, so a session stuck on the same failure is pointed at it (rescue)
    assert found["state"] == "proposed" and found["tags"] == ["quiet-pass", f"signature:{draft['signature']}"]
    assert [e["kind"] for e in found["evidence"]] == ["event", "event", "event"]
    with store.connect() as conn:
        assert review.rate(conn) == review.Rate(1, 0, 1)  # the promise draft still waits


def test_a_noisy_log_without_a_fixed_pair_drafts_nothing(team_clone: Path) -> None:
    """10,000 events: reads, passing and failing runs, flakes (fail then pass with no edit), failures never
    fixed, edits in other sessions. None of them is a failed -> fixed pair."""
    rnd = random.Random(5)
    noise: list[dict[str, Any]] = []
    start = int(time.time() * 1000) - 3_600_000
    for n in range(10_000):
        session = f"s{n % 37}"
        kind = rnd.random()
        base = {"ts": start + n, "session": {"id": session}, "harness": {"name": "codex"}}
        if kind < 0.4:
            noise.append({**base, "event": {"action": "tool.completed", "id": f"r{n}"},
                          "file": {"paths": [f"src/m{n % 50}.py"], "op": "read"}})
        elif kind < 0.7:
            noise.append({**base, "event": {"action": "tool.completed", "id": f"p{n}"},
                          "command": {"command": f"ls dir{n % 9}", "exit_code": 0}})
        elif kind < 0.9:
            # a flaky test in its own session: fails, then passes with no edit in between
            flaky = {**base, "session": {"id": f"flake{n}"}}
            noise.append({**flaky, "event": {"action": "tool.completed", "id": f"f{n}"},
                          "command": {"command": "pytest tests/test_flaky.py", "exit_code": 1},
                          "output": {"text": "FAILED tests/test_flaky.py::test_x - TimeoutError"}})
            noise.append({**flaky, "ts": start + n, "event": {"action": "tool.completed", "id": f"g{n}"},
                          "command": {"command": "pytest tests/test_flaky.py", "exit_code": 0}})
        else:
            # an edit, then a failure that is never fixed
            noise.append({**base, "session": {"id": f"stuck{n}"}, "event": {"action": "tool.completed", "id": f"e{n}"},
                          "file": {"paths": ["src/x.py"], "op": "modify"}})
            noise.append({**base, "session": {"id": f"stuck{n}"}, "event": {"action": "tool.completed", "id": f"x{n}"},
                          "command": {"command": "make build", "exit_code": 2}, "output": {"text": "error: boom"}})
    assert len(noise) >= 10_000
    started = time.perf_counter()
    done = drafting.run(noise[:12_000])
    assert time.perf_counter() - started < 30
    assert (done.drafted, done.candidates) == (0, 0)
    with store.connect() as conn:
        assert store.listing(conn) == []


def test_pairs_need_edits_between_the_failure_and_the_pass() -> None:
    def ev(i: int, **fields: Any) -> dict[str, Any]:
        return {"ts": i, "event": {"action": "tool.completed", "id": str(i)}, "session": {"id": "s"},
                "harness": {"name": "codex"}, **fields}

    fail = {"command": {"command": "cd app && pytest -q 2>&1 | tail -5", "exit_code": 1},
            "output": {"text": "E   KeyError: 'x'\nFAILED tests/test_a.py::test_b - KeyError"}}
    edit = {"file": {"paths": ["app/a.py"], "op": "modify"}}
    ok = {"command": {"command": "pytest  -q", "exit_code": 0}}
    (pair,) = pairs.in_session([ev(1, **fail), ev(2, **edit), ev(3, **fail), ev(4, **edit), ev(5, **ok)])
    assert (pair.command, pair.failed["event"]["id"], [e["event"]["id"] for e in pair.edits]) == ("pytest -q", "3", ["2", "4"])
    assert (pair.test, pair.error_class) == ("tests/test_a.py::test_b", "KeyError")
    assert pairs.in_session([ev(1, **fail), ev(2, **ok)]) == []  # a flake
    assert pairs.in_session([ev(1, **edit), ev(2, **fail), ev(3, **edit)]) == []  # never fixed


def test_the_gate_floors_success_and_reuse_before_the_mean() -> None:
    t = gate.Thresholds(reuse_floor=50, min_mean=60)
    assert gate.passes({"task_success": 100, "evidence": 100, "reuse": 50}, t)
    # The critique's case: a successful, well-evidenced run with reuse at zero clears a plain mean (200/3 > 60).
    assert not gate.passes({"task_success": 100, "evidence": 100, "reuse": 0}, t)
    assert not gate.passes({"task_success": 0, "evidence": 100, "reuse": 100}, t)
    assert not gate.passes({"task_success": 100, "evidence": 0, "reuse": 60}, t)  # mean 53
    assert not gate.passes({"task_success": 100, "reuse": 90}, t)  # an incomplete evaluation never passes
    assert gate.clamp(True) is None and gate.clamp(101) is None and gate.clamp(99.6) == 100
    assert len(gate.RUBRIC_HASH) == 64


def test_candidates_are_rebuilt_from_stored_scores_without_scoring_again(team_clone: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    replay("codex", team_clone, Path(os.environ["GITIVE_HOME"]))
    drafting.run()
    with store.connect() as conn:
        (draft,) = [d for d in store.listing(conn) if d["kind"] == "lesson"]
        scores = store.scores(conn, gate.RUBRIC_HASH)[draft["id"]]

    def no_scoring(*_: Any) -> Any:
        raise AssertionError("rebuilding must not score")

    monkeypatch.setattr(gate, "heuristic_reuse", no_scoring)
    monkeypatch.setattr(gate, "computed", no_scoring)
    with store.connect() as conn:
        assert gate.candidates(conn, gate.Thresholds(reuse_floor=scores["reuse"])) == [draft["id"]]
        assert gate.candidates(conn, gate.Thresholds(reuse_floor=scores["reuse"] + 1)) == []
    assert run(["learn", "--rebuild", "--reuse-floor", str(scores["reuse"] + 1)]) == 0
    with store.connect() as conn:
        assert store.meta_get(conn, "reuse_floor") == str(scores["reuse"] + 1)  # kept for the next review


def test_draft_ids_contain_no_scores_and_a_redraft_is_the_same_draft(team_clone: Path) -> None:
    replay("codex", team_clone, Path(os.environ["GITIVE_HOME"]))
    logged = _events()
    drafting.run(logged)
    with store.connect() as conn:
        first = [d["id"] for d in store.listing(conn)]
        store.save_scores(conn, first[0], gate.RUBRIC_HASH, "writer", {"task_success": 100, "evidence": 100,
                                                                      "reuse": 3})
    drafting.run(logged)
    with store.connect() as conn:
        assert [d["id"] for d in store.listing(conn)] == first


def test_a_writer_command_writes_the_draft_and_scores_reuse(team_clone: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    seen = tmp_path / "projection.json"
    script = tmp_path / "writer.py"
    script.write_text(
        "import json, sys\n"
        f"data = json.load(sys.stdin); open({str(seen)!r}, 'w').write(json.dumps(data))\n"
        "print(json.dumps({'text': 'Settings moved to config/; tests read SETTINGS_PATH at import.', "
        "'applicability': 'Changing where settings live', 'kind': 'Gotcha', 'symptoms': ['old path in test'], "
        "'reuse': 80}))\n")
    monkeypatch.setenv("GITIVE_LEARN_WRITER", f"{sys.executable} {script}")
    replay("claude", team_clone, Path(os.environ["GITIVE_HOME"]))
    drafting.run()
    with store.connect() as conn:
        (draft,) = [d for d in store.listing(conn) if d["kind"] == "lesson"]
        by_writer = conn.execute("SELECT scores FROM evaluations WHERE scorer = 'writer'").fetchone()
    assert draft["writer"] == "command" and draft["text"].startswith("Settings moved")
    assert json.loads(by_writer[0])["reuse"] == 80
    projection = json.loads(seen.read_text())
    assert projection["command"] == CMD and projection["files_changed"] == ["src/app/settings.py"]
    assert [e["action"] for e in projection["events"]] == ["tool.completed"] * 3
    assert projection["events"][0]["command"]["exit_code"] == 1  # the structured fields reach the writer


def test_a_failing_writer_falls_back_to_the_skeleton_and_says_why(team_clone: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITIVE_LEARN_WRITER", f"{sys.executable} -c 'print(\"not json\")'")
    replay("codex", team_clone, Path(os.environ["GITIVE_HOME"]))
    done = drafting.run()
    assert done.drafted == 2 and any("not usable" in p for p in done.problems)
    with store.connect() as conn:
        assert {d["writer"] for d in store.listing(conn)} == {"skeleton", "extracted"}


def test_the_projection_keeps_the_head_and_tail_of_long_sessions() -> None:
    from gitive.learn import writer

    evs = [{"ts": i, "event": {"action": "tool.completed", "id": str(i)}, "session": {"id": "s"},
            "output": {"text": "x" * 5000}} for i in range(200)]
    pair = pairs.Pair("s", "codex", "", "c", evs[0], evs[1:2], evs[-1], [], "sig", "", "", "")
    shown = writer.projection(pair, evs)["events"]
    assert len(shown) == 81 and shown[40] == {"omitted": 120}
    assert shown[0]["id"] == "0" and shown[-1]["id"] == "199"
    assert all(len(e.get("output", {}).get("text", "")) < 1300 for e in shown if "output" in e)


def test_extraction_can_be_turned_off(team_clone: Path) -> None:
    assert run(["learn", "--off"]) == 0
    replay("codex", team_clone, Path(os.environ["GITIVE_HOME"]))
    assert drafting.run().drafted == 0
    assert run(["learn", "--on"]) == 0
    assert drafting.run().drafted == 2


def test_promises_are_read_from_what_the_person_typed() -> None:
    found = promises.in_prompt("Fix the flaky test. I'll remove the grace period once auth-rotation merges! "
                               "Remind me to bump the SDK after the release. I'll do it. Please run the tests.")
    assert [(a, c, w) for _, a, c, w in found] == [("remove the grace period", "auth-rotation merges", "once"),
                                                  ("bump the SDK", "the release", "after")]
    assert promises.in_prompt("Run the tests and tell me what fails") == []


def test_the_daemon_tick_runs_the_pass_at_most_hourly(team_clone: Path) -> None:
    from gitive.learn import schedule

    replay("codex", team_clone, Path(os.environ["GITIVE_HOME"]))
    now = time.monotonic()
    assert schedule.tick(now) == now  # not due
    started = schedule.tick(now - schedule.EVERY_S - 1)
    assert started > now - 1
    for _ in range(200):
        with store.connect() as conn:
            if store.meta_get(conn, "last_run"):
                break
        time.sleep(0.05)
    with store.connect() as conn:
        assert len(store.listing(conn)) == 2
