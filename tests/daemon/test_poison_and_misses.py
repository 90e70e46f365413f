"""One bad payload poisons nothing, and a miss is never silent, with the real ``gitive-hook`` and the CLI.

- A SessionStart whose ``session_id`` holds a lone surrogate (``"s\\ud800"``, valid JSON) used to write a line
  from which ``gitive who``, ``gitive digest`` and MCP ``context_for`` failed until it was deleted by hand. The
  hook now replaces such text where it normalizes its input, and every reader of the event log skips a bad
  line (an older hook's, a torn one, a foreign one) with one warning.
- A delivery the hook could not make is recorded with its reason and counted by ``gitive status``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

from gitive.capture import sessions
from testing import live
from testing.machines import Machine

POISON = '{"session_id": "s\\ud800", "cwd": "%s", "hook_event_name": "SessionStart", "source": "startup"}'
OLD_LINE = ('{"event":{"action":"session.start","id":"x"},"harness":{"name":"claude"},"session":{"id":"s\\ud800",'
            '"working_directory":"%s"},"timestamp":"2026-12-01T00:00:00.000Z","ts":%d}\n')


def env(machine: Machine) -> dict[str, str]:
    return {**os.environ, **{k: v for k, v in machine.env.items() if v is not None}, "GITIVE_HOME": str(machine.home)}


def events_file(machine: Machine) -> Path:
    return machine.home / "events" / "events.jsonl"


def test_a_lone_surrogate_in_a_payload_is_replaced_and_every_reader_goes_on(pair: list[Machine]) -> None:
    a, _ = pair
    run = subprocess.run([str(live.HOOK), "claude", "session-start"], input=(POISON % a.clone).encode(),
                         capture_output=True, cwd=a.clone, env=env(a))
    assert run.returncode == 0
    lines = events_file(a).read_bytes().decode("utf-8").splitlines()  # UTF-8 through and through
    assert json.loads(lines[-1])["session"]["id"] == "s\ufffd"
    for command in (("who",), ("who", "--json"), ("digest",)):
        done = a.run(*command)
        assert done.code == 0, (command, done.out, done.err)


def test_a_poisoned_line_an_older_hook_wrote_is_skipped_with_one_warning(pair: list[Machine]) -> None:
    a, _ = pair
    live.hook(a, "session-start", live.session_start(a, "healthy"))
    with open(events_file(a), "a", encoding="utf-8") as fh:
        fh.write(OLD_LINE % (a.clone, live.now_ms()))  # as the old hook wrote it: the escape, not UTF-8
        fh.write("[1, 2, 3]\n")  # valid JSON, no event
        fh.write('{"event": "not an object", "ts": 1}\n')
    first = a.run("who", "--json")
    assert first.code == 0, first
    assert first.err.count("skipped an unreadable line in the event log") == 3, first.err  # once each
    assert a.run("digest").code == 0
    assert "alice/a-claude" in {row["address"] for row in a.json("who")}  # the healthy session still counts
    code = ("import asyncio, json, sys\n"
            "from gitive.mcp import context\n"
            "print(json.dumps(context.context_for(sys.argv[1], 'alice/a-claude'), default=str)[:100])\n")
    mcp = subprocess.run([sys.executable, "-c", code, str(a.clone)], capture_output=True, text=True, cwd=a.clone,
                         env=env(a))
    assert mcp.returncode == 0, mcp.stderr


def test_a_missed_delivery_is_recorded_and_counted_by_status(pair: list[Machine]) -> None:
    a, _ = pair
    with live.on(a):
        lock = sessions._path("claude", "locked").with_suffix(".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    holder = subprocess.Popen([sys.executable, "-c", "import fcntl, os, signal, sys\n"
                               "fh = open(sys.argv[1], 'a'); fcntl.flock(fh, fcntl.LOCK_EX)\n"
                               "print('held', flush=True); signal.pause()", str(lock)],
                              stdout=subprocess.PIPE)
    try:
        assert holder.stdout and holder.stdout.readline() == b"held\n"
        holder.send_signal(signal.SIGSTOP)
        run = live.hook_process(a, "session-start", live.session_start(a, "locked"))
        assert run.code == 0
    finally:
        holder.kill()
        holder.wait()
    report = a.json("status")
    assert report["deliveries"]["missed"] == {"session-locked": 1}
    text = a.ok("status").out
    assert "missed 1x (session-locked): another hook of this session holds its state" in text
