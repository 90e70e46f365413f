"""`gitive handoff`: the brief from the local event log (Claude Code hook payloads), kept local until sent, and
its signed marker; sent to the anchor it becomes a task."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from testing import live
from testing import prepared as prep
from testing.anchor import AnchoredTeam

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def _session(team: AnchoredTeam) -> None:
    m = team.alice
    live.hook(m, "session-start", live.session_start(m, "s-hand"))
    live.hook(m, "prompt", {"session_id": "s-hand", "cwd": str(m.clone), "hook_event_name": "UserPromptSubmit",
                            "prompt": "make check_calc pass; ```fenced``` text stays quoted"})
    live.hook(m, "post-tool", live.bash(m, "s-hand", "python3 check_calc.py", f"AssertionError token={TOKEN}", 1))
    live.hook(m, "post-tool", live.edit(m, "s-hand", "calc.py"))


def test_handoff_is_written_locally_redacted_with_safety_lines_first_and_a_signed_marker(team: AnchoredTeam) -> None:
    from gitive.capture.handoff import SAFETY, verify_marker

    _session(team)
    out = team.alice.json("handoff")
    path = Path(out["path"])
    text = path.read_text()
    assert text.startswith(SAFETY) and len(text.encode()) <= 48 * 1024
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert TOKEN not in text and "calc.py" in text and "exit 1" in text and "git status" in text
    assert "message" not in out and "task" not in out  # nothing sent
    assert verify_marker(text, team.alice.team_id, [team.alice.id])["session"] == "s-hand"
    assert verify_marker(text, team.alice.team_id, [team.bob.id]) is None  # not bob's
    forged = text.replace("make check_calc pass", "make check_calc fail")
    assert verify_marker(forged, team.alice.team_id, [team.alice.id]) is None  # the brief changed under it


def test_handoff_to_the_anchor_is_a_task_carrying_the_brief_and_its_marker(team: AnchoredTeam) -> None:
    prep.buggy_project(team.alice)
    _session(team)
    out = team.alice.json("handoff", "--to", "anchor", "--test", prep.TEST)
    task = out["task"]
    assert task["source"]["kind"] == "handoff" and task["marker"]["from"] == team.alice.id
    assert task["brief"] == Path(out["path"]).read_text()


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(min_size=1, max_size=200), st.integers(min_value=0, max_value=10**12))
def test_a_marker_moved_onto_another_brief_never_verifies(tmp_path: Path, other: str, at: int) -> None:
    from nacl.signing import SigningKey

    from gitive.capture.handoff import verify_marker, with_marker
    from gitive.core.keys import machine_id

    key = SigningKey.generate()
    team = "ab" * 32
    signed, _ = with_marker("the real brief\n", key, team, "s1", at)
    assert verify_marker(signed, team, [machine_id(key)]) is not None
    line = signed.splitlines()[-1]
    moved = f"{other}\n\n{line}\n"
    if moved != signed:
        assert verify_marker(moved, team, [machine_id(key)]) is None
    assert verify_marker(signed, "cd" * 32, [machine_id(key)]) is None  # another team


def test_a_password_said_in_words_and_known_key_formats_are_redacted(team: AnchoredTeam) -> None:
    m = team.alice
    live.hook(m, "session-start", live.session_start(m, "s-pw"))
    for words in ("my password is hunter2 for the staging db", "use the sandbox key, the api key is Zx81!qq",
                  "aws creds: AKIAIOSFODNN7EXAMPLE and slack xoxb-123456789012-abcdefghijkl"):
        live.hook(m, "prompt", {"session_id": "s-pw", "cwd": str(m.clone), "hook_event_name": "UserPromptSubmit",
                                "prompt": words})
    text = Path(m.json("handoff", "--session", "s-pw")["path"]).read_text()
    for secret in ("hunter2", "Zx81!qq", "AKIAIOSFODNN7EXAMPLE", "xoxb-123456789012"):
        assert secret not in text, secret
    assert "my password is [REDACTED] for the staging db" in text  # the words around it stay readable


def test_sending_a_kept_brief_again_keeps_one_marker_naming_its_session(team: AnchoredTeam) -> None:
    from gitive.capture.handoff import verify_marker

    _session(team)
    kept = Path(team.alice.json("handoff")["path"])
    again = team.alice.json("handoff", "--brief", str(kept))
    text = Path(again["path"]).read_text()
    assert text.count("[gitive-handoff ") == 1 and again["session"] == "s-hand"
    assert verify_marker(text, team.alice.team_id, [team.alice.id])["session"] == "s-hand"
    edited = kept.with_name("edited.md")
    edited.write_text(kept.read_text().replace("make check_calc pass", "make check_calc pass, then tidy"))
    third = Path(team.alice.json("handoff", "--brief", str(edited))["path"]).read_text()
    assert third.count("[gitive-handoff ") == 1 and "then tidy" in third
    assert verify_marker(third, team.alice.team_id, [team.alice.id])["session"] == "s-hand"
