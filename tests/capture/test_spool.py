"""Prepared answers through the spool, with the real ``gitive-hook``: an item the daemon left for a session
reaches the agent in the harness's shape and is acknowledged by rename; an item a reply has no room for
waits and goes first next time; a hook killed holding an item gives it back at once; two hooks racing for
one item deliver it once; a daemon that does not rank a prompt in time is recorded, and the call ranks it
itself. Items are written with ``gitive.capture.spool.put``, as the daemon writes them.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from gitive.capture import deadline, deliveries, events, spool
from gitive.capture.adapters import ADAPTERS

from .support import (
    HOOK,
    NO_OPINION,
    TeamRepo,
    claude_shape,
    cursor_shape,
    feed,
    hook_env,
    payload,
    payload_text,
    run_hook,
)

MESSAGE = '<team-message from="bob/x" id="m1">\nhi\n</team-message>'


def session_of(harness: str, name: str, repo: Path) -> str:
    body = payload(harness, name, repo, transcript="/nonexistent", lesson="0" * 16)
    return body.get("session_id") or body["conversation_id"]


def put(harness: str, session: str, frame: str = MESSAGE, ident: str = "m1", seq: int = 0,
        kind: str = "message") -> Path:
    sdir = spool.session_dir(harness, session)
    assert spool.put(sdir, {"id": ident, "base": ident, "kind": kind, "frame": frame, "due": 1_000 + seq,
                            "seq": seq})
    return sdir


def listing(sdir: Path, folder: str) -> list[str]:
    try:
        return sorted(os.listdir(sdir / folder))
    except FileNotFoundError:
        return []


def logged(action: str) -> list[dict[str, Any]]:
    return list(events.read(actions=(action,)))


@pytest.mark.parametrize(("harness", "event", "name", "expected"), [
    ("claude", "post-tool", "post-tool-bash-ok", claude_shape("PostToolUse", MESSAGE)),
    ("claude", "prompt", "prompt", None),  # the prompt's lesson first, then the message
    ("codex", "post-tool", "post-tool-bash-ok", claude_shape("PostToolUse", MESSAGE)),
    ("cursor", "post-tool", "post-tool-shell-ok", cursor_shape(MESSAGE)),
    ("gemini", "session-start", "session-start", None),  # card first, then the message
])
def test_a_spooled_message_reaches_the_agent_and_is_acknowledged(
        team_repo: TeamRepo, short_home: Path, tmp_path: Path, harness: str, event: str, name: str,
        expected: str | None) -> None:
    sdir = put(harness, session_of(harness, name, team_repo.path))
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("")
    run = run_hook(harness, event, stdin=payload_text(harness, name, team_repo.path,
                                                      transcript=str(transcript)).encode())
    if expected is None and event == "session-start":
        expected = claude_shape("SessionStart", team_repo.card() + "\n\n" + MESSAGE)
    if expected is None:
        expected = claude_shape("UserPromptSubmit", team_repo.settings.frame() + "\n\n" + MESSAGE)
    assert run.code == 0 and run.out == expected, run.err
    assert listing(sdir, "ready") == [] and listing(sdir, "taken") == []
    [done] = listing(sdir, "done")  # acknowledged: the daemon books it as delivered from here
    assert json.loads((sdir / "done" / done).read_text())["id"] == "m1"


@pytest.mark.parametrize(("harness", "event", "name"), [
    ("claude", "stop", "stop"), ("claude", "stop", "stop-active"), ("claude", "session-end", "session-end"),
    ("codex", "stop", "stop"), ("cursor", "stop", "stop"), ("cursor", "session-start", "session-start"),
    ("gemini", "session-end", "session-end")])
def test_where_a_harness_has_no_mail_channel_items_wait(team_repo: TeamRepo, short_home: Path, tmp_path: Path,
                                                        harness: str, event: str, name: str) -> None:
    # Stop offers only continuation prompts (Claude's decision: block, Codex's reason, Cursor's
    # followup_message), which the harness turns into its user's words; Cursor's sessionStart is not waited for.
    sdir = put(harness, session_of(harness, name, team_repo.path))
    run = feed(harness, event, name, team_repo.path, transcript=str(tmp_path / "none.jsonl"))
    assert run.code == 0
    assert "team-message" not in run.out and "followup_message" not in run.out and "block" not in run.out
    assert len(listing(sdir, "ready")) == 1  # still waiting for the next call with a mail channel


def test_lesson_and_message_share_one_reply(team_repo: TeamRepo, short_home: Path) -> None:
    put("claude", session_of("claude", "post-tool-edit", team_repo.path))
    run = feed("claude", "post-tool", "post-tool-edit", team_repo.path)
    assert run.out == claude_shape("PostToolUse", team_repo.settings.frame() + "\n\n" + MESSAGE)


def test_an_item_without_room_waits_is_recorded_and_goes_first_next_call(team_repo: TeamRepo,
                                                                         short_home: Path) -> None:
    cap = ADAPTERS["claude"].cap
    big = '<team-message from="bob/x" id="m9">\n' + "x" * (cap - 80) + "\n</team-message>"
    session = session_of("claude", "post-tool-edit", team_repo.path)
    sdir = put("claude", session, big, "m9", seq=0)
    put("claude", session, MESSAGE, "m1", seq=1)
    first = feed("claude", "post-tool", "post-tool-edit", team_repo.path)
    assert first.out == claude_shape("PostToolUse", team_repo.settings.frame())  # the lesson took the room
    assert len(listing(sdir, "ready")) == 2 and listing(sdir, "done") == []
    [deferred] = logged("delivery.deferred")
    assert deferred["delivery"]["items"] == 2 and deferred["delivery"]["reason"] == "no-room"
    second = feed("claude", "post-tool", "post-tool-bash-ok", team_repo.path)  # no lesson this time
    assert second.out == claude_shape("PostToolUse", big)  # whole, and first; the small one still waits
    third = feed("claude", "post-tool", "post-tool-bash-ok", team_repo.path)
    assert third.out == claude_shape("PostToolUse", MESSAGE)


def test_a_lesson_without_room_after_a_deferred_item_is_recorded_and_comes_first_at_the_next_call(
        team_repo: TeamRepo, short_home: Path) -> None:
    """The deferred item goes first and takes the room; the edited file's lesson is recorded as missed and
    owed: the session's next call (of any event, whatever file it touches) brings it first, and only once."""
    cap = ADAPTERS["claude"].cap
    big = '<team-message from="bob/x" id="m9">\n' + "x" * (cap - 80) + "\n</team-message>"
    sdir = put("claude", session_of("claude", "post-tool-edit", team_repo.path), big, "m9")
    first = feed("claude", "post-tool", "post-tool-edit", team_repo.path)
    assert first.out == claude_shape("PostToolUse", team_repo.settings.frame())  # the message waits
    migrate = payload("claude", "post-tool-edit", team_repo.path)
    migrate["tool_input"]["file_path"] = str(team_repo.path / "src/db/migrate.py")
    second = run_hook("claude", "post-tool", stdin=json.dumps(migrate).encode())
    assert second.out == claude_shape("PostToolUse", big), second.err  # the deferred item first, whole
    assert len(listing(sdir, "done")) == 1
    [missed] = [e for e in logged("delivery.missed") if e["delivery"]["reason"] == "no-room"]
    assert missed["delivery"]["hook"] == "post-tool" and "1 item(s)" in missed["delivery"]["what"]
    put("claude", session_of("claude", "post-tool-edit", team_repo.path), MESSAGE, "m1", seq=1)
    third = feed("claude", "post-tool", "post-tool-bash-ok", team_repo.path)  # migrate.py not touched again
    assert third.out == claude_shape("PostToolUse", team_repo.migrate.frame() + "\n\n" + MESSAGE), third.err
    migrate["tool_use_id"] = "toolu_again"
    fourth = run_hook("claude", "post-tool", stdin=json.dumps(migrate).encode())
    assert fourth.out == NO_OPINION  # shown once, never twice
    shown = [e["lesson"]["id"] for e in logged("team.lesson.injected")]
    assert sorted(shown) == sorted([team_repo.settings.id, team_repo.migrate.id])


def _fill_the_next_reply(session: str) -> Path:
    """Two messages of nearly the whole cap: the first call carries one and defers the other, which then
    fills the call after it."""
    cap = ADAPTERS["claude"].cap
    bigs = [f'<team-message from="bob/x" id="m{n}">\n' + "x" * (cap - 80) + "\n</team-message>" for n in (8, 9)]
    sdir = put("claude", session, bigs[0], "m8", seq=0)
    put("claude", session, bigs[1], "m9", seq=1)
    return sdir


def test_a_prompt_lesson_without_room_comes_first_at_the_next_call_once(team_repo: TeamRepo,
                                                                       short_home: Path) -> None:
    sdir = _fill_the_next_reply(session_of("claude", "prompt", team_repo.path))
    assert "m8" in feed("claude", "post-tool", "post-tool-bash-ok", team_repo.path).out
    full = feed("claude", "prompt", "prompt", team_repo.path)
    assert "m9" in full.out and "<team-memory" not in full.out, full.out  # the prompt's lesson had no room
    assert len(listing(sdir, "done")) == 2
    assert [e["delivery"]["hook"] for e in logged("delivery.missed")
            if e["delivery"]["reason"] == "no-room"] == ["prompt"]
    stop = feed("claude", "stop", "stop", team_repo.path, transcript="/nonexistent")  # no context channel
    assert "team-memory" not in stop.out
    after = feed("claude", "post-tool", "post-tool-bash-ok", team_repo.path)
    assert after.out == claude_shape("PostToolUse", team_repo.settings.frame()), after.err
    again = feed("claude", "prompt", "prompt", team_repo.path)
    assert "team-memory" not in again.out  # shown once
    assert [e["lesson"]["id"] for e in logged("team.lesson.injected")] == [team_repo.settings.id]
    assert deliveries.summary()["missed"] == {"no-room": 1}  # what `gitive status` counts


def test_a_card_without_room_comes_whole_at_the_next_call_once(team_repo: TeamRepo, short_home: Path) -> None:
    _fill_the_next_reply(session_of("claude", "session-start", team_repo.path))
    assert "m8" in feed("claude", "post-tool", "post-tool-bash-ok", team_repo.path).out
    full = feed("claude", "session-start", "session-start", team_repo.path)  # a resumed session: m9 first
    assert "m9" in full.out and "team-memory" not in full.out, full.out
    after = feed("claude", "post-tool", "post-tool-bash-ok", team_repo.path)
    assert after.out == claude_shape("PostToolUse", team_repo.card()), after.err
    assert feed("claude", "post-tool", "post-tool-bash-ok", team_repo.path).out == NO_OPINION
    edit = feed("claude", "post-tool", "post-tool-edit", team_repo.path)  # settings.py: its lesson was shown
    assert edit.out == NO_OPINION
    [missed] = [e for e in logged("delivery.missed") if e["delivery"]["reason"] == "no-room"]
    assert missed["delivery"]["hook"] == "session-start" and "2 item(s)" in missed["delivery"]["what"]


def test_a_lesson_whose_reply_could_not_be_written_is_owed_again(team_repo: TeamRepo, short_home: Path) -> None:
    """A harness that closed the pipe before reading: the lesson counts as not shown and comes next call."""
    read, write = os.pipe()
    os.close(read)  # writing the reply fails: EPIPE
    try:
        proc = subprocess.run([str(HOOK), "claude", "post-tool"], stdout=write, stderr=subprocess.PIPE,
                              input=payload_text("claude", "post-tool-edit", team_repo.path).encode(),
                              env=hook_env(None), cwd="/", timeout=20)
    finally:
        os.close(write)
    assert proc.returncode == 0, proc.stderr
    [missed] = [e for e in logged("delivery.missed") if e["delivery"]["reason"] == "reply-unwritten"]
    assert "1 lesson(s) owed again" in missed["delivery"]["what"]
    after = feed("claude", "post-tool", "post-tool-bash-ok", team_repo.path)
    assert after.out == claude_shape("PostToolUse", team_repo.settings.frame()), after.err
    assert feed("claude", "post-tool", "post-tool-edit", team_repo.path).out == NO_OPINION


def test_a_lesson_owed_in_one_session_never_reaches_another(team_repo: TeamRepo, short_home: Path) -> None:
    _fill_the_next_reply(session_of("claude", "prompt", team_repo.path))
    feed("claude", "post-tool", "post-tool-bash-ok", team_repo.path)
    assert "team-memory" not in feed("claude", "prompt", "prompt", team_repo.path).out
    other = payload("claude", "post-tool-bash-ok", team_repo.path)
    other["session_id"] = "another-session"
    assert run_hook("claude", "post-tool", stdin=json.dumps(other).encode()).out == NO_OPINION


def test_an_unreadable_item_is_skipped_and_the_rest_delivered(team_repo: TeamRepo, short_home: Path) -> None:
    session = session_of("claude", "post-tool-bash-ok", team_repo.path)
    sdir = put("claude", session)
    (sdir / "ready" / "0000000000001-0000-m-broken.json").write_text('{"id": 5, "frame"')
    run = feed("claude", "post-tool", "post-tool-bash-ok", team_repo.path)
    assert run.out == claude_shape("PostToolUse", MESSAGE)


def _full_pipe() -> tuple[int, int]:
    """A pipe whose buffer is full: a process writing to it blocks (a harness that stopped reading)."""
    read, write = os.pipe()
    fcntl.fcntl(write, fcntl.F_SETFL, os.O_NONBLOCK)
    try:
        while True:
            os.write(write, b"x" * 65536)
    except BlockingIOError:
        pass
    fcntl.fcntl(write, fcntl.F_SETFL, 0)
    return read, write


def test_a_hook_killed_holding_an_item_gives_it_back_at_once(team_repo: TeamRepo, short_home: Path) -> None:
    session = session_of("claude", "post-tool-bash-ok", team_repo.path)
    sdir = put("claude", session)
    read, write = _full_pipe()
    try:
        proc = subprocess.Popen([str(HOOK), "claude", "post-tool"], stdin=subprocess.PIPE, stdout=write,
                                stderr=subprocess.DEVNULL, env=hook_env(), cwd="/")
        assert proc.stdin
        proc.stdin.write(payload_text("claude", "post-tool-bash-ok", team_repo.path).encode())
        proc.stdin.close()
        deadline = time.monotonic() + 20
        while not listing(sdir, "taken") and time.monotonic() < deadline:
            time.sleep(0.01)
        [taken] = listing(sdir, "taken")
        assert taken.endswith(f".{proc.pid}." + taken.rsplit(".", 1)[1])  # claimed under its pid
        time.sleep(0.2)
        assert proc.poll() is None  # blocked writing its reply
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        os.close(read)
        os.close(write)
    started = time.monotonic()
    again = feed("claude", "post-tool", "post-tool-bash-ok", team_repo.path)  # the very next call
    assert again.out == claude_shape("PostToolUse", MESSAGE)
    assert time.monotonic() - started < 10  # not after an in-flight timeout
    [back] = logged("delivery.reclaimed")
    assert back["delivery"]["reason"] == "hook-died" and str(proc.pid) in back["delivery"]["what"]


def test_hooks_racing_for_one_item_deliver_it_once(team_repo: TeamRepo, short_home: Path) -> None:
    sdir = put("claude", session_of("claude", "post-tool-bash-ok", team_repo.path))
    stdin = payload_text("claude", "post-tool-bash-ok", team_repo.path).encode()
    procs = [subprocess.Popen([str(HOOK), "claude", "post-tool"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=hook_env(), cwd="/") for _ in range(6)]
    outs = [p.communicate(stdin, timeout=30)[0].decode() for p in procs]
    assert sum("team-message" in out for out in outs) == 1
    assert all(out in (NO_OPINION, claude_shape("PostToolUse", MESSAGE)) for out in outs)
    assert len(listing(sdir, "done")) == 1


class SilentDaemon:
    """Accepts on ``daemon.sock`` and never answers, with a fresh heartbeat: alive as far as hooks can see."""

    def __init__(self, home: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(str(home / "daemon.sock"))
        self.sock.listen(16)
        self.held: list[socket.socket] = []
        self.stop = threading.Event()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        self.sock.settimeout(0.05)
        while not self.stop.is_set():
            spool.beat()
            try:
                self.held.append(self.sock.accept()[0])
            except (TimeoutError, OSError):
                continue


@pytest.fixture
def silent_daemon(short_home: Path) -> Iterator[SilentDaemon]:
    short_home.mkdir(parents=True, exist_ok=True)
    daemon = SilentDaemon(short_home)
    yield daemon
    daemon.stop.set()
    daemon.sock.close()


def test_a_prompt_the_daemon_does_not_rank_in_time_is_recorded_and_ranked_by_the_call(
        team_repo: TeamRepo, silent_daemon: SilentDaemon, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITIVE_HOOK_BUDGET_MS")  # the prompt's own budget
    run = feed("claude", "prompt", "prompt", team_repo.path)
    assert run.out == claude_shape("UserPromptSubmit", team_repo.settings.frame())
    assert run.seconds < deadline.HARD_CAP_S  # within its budget, whatever the daemon does
    [miss] = logged("delivery.missed")
    assert miss["delivery"]["reason"] == "prepare-late" and miss["delivery"]["hook"] == "prompt"


def test_what_is_due_at_once_reaches_the_model_within_two_calls_when_it_fits_two_replies(
        team_repo: TeamRepo, short_home: Path) -> None:
    """Bounded lateness: four messages queued during a turn (15 KB, under two of Claude Code's replies) all
    reach the model by the second call with a context channel, oldest first, the deferred ones first."""
    session = session_of("claude", "prompt", team_repo.path)
    bodies = [("m1", 4000), ("m2", 4000), ("m3", 4000), ("m4", 3000)]
    frames = {ident: f'<team-message from="bob/x" id="{ident}">\n' + ident * (size // 2) + "\n</team-message>"
              for ident, size in bodies}
    for seq, (ident, _) in enumerate(bodies):
        put("claude", session, frames[ident], ident, seq=seq)
    seen: list[list[str]] = []
    for event, name in (("prompt", "prompt"), ("post-tool", "post-tool-bash-ok")):
        body = payload("claude", name, team_repo.path) | {"session_id": session}
        out = json.loads(run_hook("claude", event, stdin=json.dumps(body).encode()).out)
        context = out["hookSpecificOutput"]["additionalContext"]
        seen.append([ident for ident, _ in bodies if f'id="{ident}"' in context])
    assert seen == [["m1", "m2"], ["m3", "m4"]]
