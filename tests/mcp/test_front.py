"""The stdio front as a harness meets it: a real ``python -m gitive.mcp`` process on pipes, raw JSON-RPC lines in,
every answer read back. It answers the handshake before the SDK has loaded, answers every queued call before
it exits, and answers lines the SDK alone would drop."""

from __future__ import annotations

import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from testing import fixtures
from testing.load import bare_python_ms, cpu_load
from tests.mcp.conftest import Team, server_env

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
CPU_TARGET_MS, WALL_TARGET_MS = 300, 1_000
# Issue 18's load: 2 busy processes per core, where bare `python -c pass` takes 120-230 ms. When other work
# makes the machine busier than that, the wall target scales with the same-run bare Python; CPU never does.
BARE_AT_TARGET_LOAD_MS = 230


def _call(ident: Any, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}


def _start(cwd: Path, env: dict[str, str], *argv: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, *(argv or ("-m", "gitive.mcp"))], cwd=cwd, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _exchange(cwd: Path, env: dict[str, str], lines: list[bytes | dict[str, Any]], *argv: str,
              timeout: float = 120) -> tuple[list[dict[str, Any]], str]:
    """Write every line at once, close stdin, and read every message the server writes before it exits."""
    proc = _start(cwd, env, *argv)
    data = b"".join(line if isinstance(line, bytes) else json.dumps(line).encode() + b"\n" for line in lines)
    out, err = proc.communicate(data, timeout=timeout)
    assert proc.returncode == 0, err.decode()
    return [json.loads(line) for line in out.splitlines()], err.decode()


def _plain(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    repo = fixtures.init_repo(tmp_path / "repo")
    return repo, {**os.environ, "GITIVE_HOME": str(tmp_path / "home")}


def test_every_queued_call_is_answered_when_stdin_closes_at_once(team: Team) -> None:
    calls = [_call(n, "get_lesson", {"id": team.session_lesson[:12]}) for n in range(1, 6)]
    calls.append(_call(6, "search_memory", {"query": "refresh token session cookie"}))
    found, err = _exchange(team.alice.clone, server_env(team.alice), [INITIALIZE, INITIALIZED, *calls])
    answers = {m["id"]: m for m in found}
    assert set(answers) == {0, 1, 2, 3, 4, 5, 6}, err
    for n in range(1, 6):
        assert answers[n]["result"]["structuredContent"]["id"] == team.session_lesson
    assert answers[6]["result"]["structuredContent"]["results"][0]["id"] == team.session_lesson
    assert "differed" not in err


def test_a_lone_surrogate_in_an_argument_gets_an_answer(tmp_path: Path) -> None:
    repo, env = _plain(tmp_path)
    raw = b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_lesson","arguments":{"id":"ab\\ud800"}}}\n'
    bad_bytes = b'{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"context_for","arguments":' \
                b'{"session":"s\xff\xfe"}}}\n'
    found, _ = _exchange(repo, env, [INITIALIZE, INITIALIZED, raw, bad_bytes])
    answers = {m["id"]: m for m in found}
    assert answers[7]["result"]["isError"] and "no lesson 'ab\ufffd'" in answers[7]["result"]["content"][0]["text"]
    assert answers[8]["result"]["isError"]  # no team here: one line saying so, not a hang


def test_lines_that_are_not_requests_get_json_rpc_errors(tmp_path: Path) -> None:
    repo, env = _plain(tmp_path)
    huge = b'{"jsonrpc":"2.0","id":3,"method":"ping","params":{"x":"' + b"a" * (9 * 1024 * 1024) + b'"}}\n'
    lines: list[bytes | dict[str, Any]] = [INITIALIZE, b"not json\n", b"[1, 2]\n", huge,
                                           {"jsonrpc": "2.0", "id": 4, "method": 5},
                                           {"jsonrpc": "2.0", "id": 5, "method": "ping"}]
    found, _ = _exchange(repo, env, lines)
    codes = [m["error"]["code"] for m in found if "error" in m]
    assert codes[:3] == [-32700, -32600, -32600]
    assert next(m for m in found if m.get("id") == 4)["error"]["code"] == -32600
    assert next(m for m in found if m.get("id") == 5)["result"] == {}  # still serving after all that
    assert all("\n" not in m["error"]["message"] for m in found if "error" in m)


def test_ids_1_and_string_1_are_two_requests(team: Team) -> None:
    lines = [INITIALIZE, INITIALIZED, _call(1, "get_lesson", {"id": team.session_lesson[:12]}),
             _call("1", "get_lesson", {"id": team.proto_lesson[:12]})]
    found, _ = _exchange(team.alice.clone, server_env(team.alice), lines)
    by_id = {json.dumps(m["id"]): m["result"]["structuredContent"]["id"] for m in found if m["id"] != 0}
    assert by_id == {"1": team.session_lesson, '"1"': team.proto_lesson}


def test_the_wire_is_stdout_only(tmp_path: Path) -> None:
    code = ("from gitive.mcp.front import _claim_stdio; import os, sys\n"
            "wire_in, wire_out = _claim_stdio(); print('stray', flush=True); os.system('echo child')\n"
            "wire_out.write(wire_in.readline()); wire_out.flush()")
    done = subprocess.run([sys.executable, "-c", code], input=b"line\n", capture_output=True, timeout=60)
    assert done.stdout == b"line\n"
    assert b"stray" in done.stderr and b"child" in done.stderr


def test_without_its_sdk_the_server_says_why_to_every_request(tmp_path: Path) -> None:
    repo, env = _plain(tmp_path)
    broken = "import sys; sys.modules['mcp'] = None; from gitive.mcp.front import main; main()"
    lines = [INITIALIZE, INITIALIZED, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, _call(2, "owed", {})]
    found, err = _exchange(repo, env, lines, "-c", broken)
    answers = {m["id"]: m for m in found}
    assert answers[0]["result"]["serverInfo"]["name"] == "gitive" and answers[1]["result"]["tools"]
    assert "could not serve" in answers[2]["error"]["message"] and "No module named" in answers[2]["error"]["message"]
    assert "could not serve" in err


def _initialize_cost(cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU milliseconds from spawn to the initialize answer read back (CPU from /proc)."""
    start = time.perf_counter()
    proc = _start(cwd, env)
    assert proc.stdin and proc.stdout
    proc.stdin.write(json.dumps(INITIALIZE).encode() + b"\n")
    proc.stdin.flush()
    answer = json.loads(proc.stdout.readline())
    wall = (time.perf_counter() - start) * 1000
    fields = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
    cpu = (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")
    proc.communicate(b"", timeout=60)
    assert answer["result"]["protocolVersion"] == "2025-06-18"
    return wall, cpu


@pytest.mark.slow
def test_initialize_is_answered_within_its_budget_quiet_and_under_load(team: Team) -> None:
    env = server_env(team.alice)
    quiet = [_initialize_cost(team.alice.clone, env) for _ in range(3)]
    with cpu_load(per_core=2, seconds=120):
        bare = statistics.median(bare_python_ms(5))
        loaded = [_initialize_cost(team.alice.clone, env) for _ in range(5)]
    for _, cpu in quiet + loaded:
        assert cpu <= CPU_TARGET_MS, (quiet, loaded)
    wall_target = WALL_TARGET_MS * max(1.0, bare / BARE_AT_TARGET_LOAD_MS)
    assert statistics.median(w for w, _ in loaded) <= wall_target, (loaded, f"bare python {bare:.0f} ms")


def _cpu_ms(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def _sdk_import_s(env: dict[str, str]) -> float:
    """Wall seconds of the SDK's own import in a fresh interpreter: the yardstick for "did it wait for it"."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import mcp.server.lowlevel"], check=True, env=env)
    return time.perf_counter() - started


def _handshake(proc: subprocess.Popen[bytes]) -> None:
    assert proc.stdin and proc.stdout
    for message in (INITIALIZE, INITIALIZED, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}):
        proc.stdin.write(json.dumps(message).encode() + b"\n")
        proc.stdin.flush()
    answers = [json.loads(proc.stdout.readline()) for _ in range(2)]
    assert [a["id"] for a in answers] == [0, 1] and answers[1]["result"]["tools"]


def _closed(proc: subprocess.Popen[bytes]) -> float:
    """Close stdin; seconds until the process exited (it must exit 0)."""
    assert proc.stdin
    closed = time.perf_counter()
    proc.stdin.close()
    code = proc.wait(timeout=60)
    took = time.perf_counter() - closed
    for pipe in (proc.stdout, proc.stderr):
        if pipe:
            pipe.close()
    assert code == 0
    return took


def test_a_session_that_calls_no_tool_never_loads_the_sdk(team: Team) -> None:
    """A harness runs its hooks and its first model turn right after the handshake; ``claude -p "say hi"`` is
    over within seconds and calls no gitive tool. Loading the SDK behind the handshake took 0.7-1.5 s of CPU
    from that session (0.9 s of wall on two quiet cores), so the front loads it only when a request needs it
    (or :data:`front.WARM_SECONDS` in). Judged by the server's CPU against the SDK's own import's CPU."""
    from gitive.mcp import front

    env = server_env(team.alice)
    done = subprocess.run([sys.executable, "-c", "import time, mcp.server.lowlevel; print(time.process_time())"],
                          check=True, env=env, capture_output=True, text=True)
    sdk_cpu_ms = float(done.stdout) * 1000
    proc = _start(team.alice.clone, env)
    _handshake(proc)
    time.sleep(min(2.0, front.WARM_SECONDS / 2))  # the harness's turn
    used = _cpu_ms(proc.pid)
    took = _closed(proc)
    assert used < 0.5 * sdk_cpu_ms, f"{used:.0f} ms of CPU by the server; the SDK's import alone {sdk_cpu_ms:.0f} ms"
    assert took < 2.0


def test_a_session_that_ends_with_nothing_owed_is_not_held_up_by_the_sdk_loading(team: Team) -> None:
    """``claude -p`` closes the server's stdin when its session ends and waits for it to exit. With nothing
    owed (here: the one call that loaded the SDK was cancelled), the front exits at once instead of waiting for
    the SDK still loading (which cost each ``claude -p "say hi"`` 3.7 s on a loaded machine). Judged against the
    SDK's own import in the same run: exiting must take well under it."""
    env = server_env(team.alice)
    sdk_import = _sdk_import_s(env)
    proc = _start(team.alice.clone, env)
    _handshake(proc)
    assert proc.stdin
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}
    for message in (_call(2, "get_lesson", {"id": "0" * 12}), cancel):  # starts the SDK, then owes nothing
        proc.stdin.write(json.dumps(message).encode() + b"\n")
    proc.stdin.flush()
    time.sleep(0.2)
    took = _closed(proc)
    assert took < 0.5 * sdk_import, (f"exited {took * 1000:.0f} ms after EOF; the SDK imports in "
                                     f"{sdk_import * 1000:.0f} ms")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_from_the_client_ends_the_server_at_once(team: Team, sig: signal.Signals) -> None:
    """Claude Code ends every session with SIGINT, then SIGTERM 100 ms later, and waits for the exit. With the
    SDK loaded the interpreter's teardown outlasted those 100 ms; the server now exits at the signal, with 0."""
    env = server_env(team.alice)
    proc = _start(team.alice.clone, env)
    _handshake(proc)
    assert proc.stdin and proc.stdout
    proc.stdin.write(json.dumps(_call(2, "get_lesson", {"id": "0" * 12})).encode() + b"\n")
    proc.stdin.flush()
    answer = json.loads(proc.stdout.readline())  # the SDK has loaded and answered
    assert answer["id"] == 2
    sent = time.perf_counter()
    proc.send_signal(sig)
    code = proc.wait(timeout=60)
    took = time.perf_counter() - sent
    proc.communicate()
    assert code == 0 and took < 0.5, f"exit {code} {took * 1000:.0f} ms after {sig.name}"


def test_an_answer_with_a_lone_surrogate_goes_out_as_utf8(tmp_path: Path) -> None:
    import io

    from gitive.mcp.front import Front

    out = io.BytesIO()
    front = Front(tmp_path, out)
    front.write({"jsonrpc": "2.0", "id": 1, "result": {"text": "ok \ud800 é", "\udfff": ["日本"]}})
    front.write({"jsonrpc": "2.0", "id": 2, "result": {"text": "plain é 日本"}})
    first, second = out.getvalue().decode("utf-8").splitlines()  # strict: every byte is UTF-8
    assert json.loads(first)["result"] == {"text": "ok \ufffd é", "\ufffd": ["日本"]}
    assert json.loads(second)["result"] == {"text": "plain é 日本"}
    assert "\\u" not in second  # not escaped to ASCII: the same bytes as before
