"""The event log: redaction before anything is written, size caps, deterministic ids, whole lines under
concurrent writers, rotation within ``KEEP_BYTES``, and the metadata-only projection."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from gitive.capture import events, normalize
from gitive.capture.adapters import ADAPTERS

PEM_BODY = ("MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u"
            "+qKhbwKfBstIs+bMY2Zkp18gnTxKLxoS2tFczGkPLPgizskuemMghRniWaoLcyehkd3qqGElvW/VDL5AaWTg0nLVkjRo9z+40RQz")
PEM = f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY[:76]}\n{PEM_BODY[76:]}\n-----END RSA PRIVATE KEY-----"

# (what, the text or value that holds it, the secret that must not reach the file)
SECRETS_IN_TEXT = [
    ("github classic token", "git push https://x@github.com: ghp_R2d4Xk9QmZ7vB1nL5sT8wY3cE6hJ0aP2uF4g",
     "R2d4Xk9QmZ7vB1nL5sT8wY3cE6hJ0aP2uF4g"),
    ("github fine-grained token", "GH=github_pat_11ABCDEFG0aBcDeFgHiJkL_MnOpQrStUvWxYz0123456789abcdefGHIJKLMNOP",
     "11ABCDEFG0aBcDeFgHiJkL_MnOpQrStUvWxYz0123456789abcdefGHIJKLMNOP"),
    ("openai key", "using sk-proj-Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Jh0GfEdCbA for the eval", "Zx8Yw7Vu6Ts5Rq4Po3Nm2Lk1Jh0GfEdCbA"),
    ("anthropic key", "ANTHROPIC=sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz012345-_x", "AbCdEfGhIjKlMnOpQrStUvWxYz012345"),
    ("slack bot token", "slack: xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
     "1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"),
    ("slack user token", "xoxp-2222222222-3333333333-4444444444-abcdef0123456789", "4444444444-abcdef0123456789"),
    ("aws access key id", "aws_access_key AKIAIOSFODNN7EXAMPLE in ~/.aws", "AKIAIOSFODNN7EXAMPLE"),
    ("google api key", "maps key AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY loaded", "SyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY"),
    ("gitlab token", "CI_TOKEN_X glpat-xY7zW6vU5tS4rQ3pO2nM1 used", "xY7zW6vU5tS4rQ3pO2nM1"),
    ("url credentials", "git clone https://deploy:s3cretPassw0rd@git.example.com/shop.git", "s3cretPassw0rd"),
    ("pem block", f"cat id_rsa\n{PEM}\ndone", PEM_BODY[:40]),
    ("bearer token", "curl -H 'Authorization: Bearer abcdef0123456789abcdef.XYZ' https://api", "abcdef0123456789abcdef"),
    ("password assignment", "mysql --host db password=hunter2horse --batch", "hunter2horse"),
    ("api key label", "export API_KEY: kq8Zt0pLmW3vXn", "kq8Zt0pLmW3vXn"),
    ("quoted secret", "client_secret = 'quoted value with spaces'", "quoted value with spaces"),
    ("aws secret env", "export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
     "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
]
SECRETS_BY_KEY = [
    ("password", "hunter2horse"), ("api_key", "k-1234567890"), ("Authorization", "Basic dXNlcjpwYXNzd29yZA=="),
    ("client_secret", "cs-abcdefghij"), ("GITHUB_TOKEN", "plain-looking-value-1"), ("cookie", "sid=4f2a9c0e"),
    ("aws_secret_access_key", "wJalrXUtnFEMI-key"), ("private_key", "-- a key --"), ("x-api-key", "9f8e7d6c5b"),
]


def log_text() -> str:
    return "".join(p.read_text() for p in sorted(events.events_dir().glob("*.jsonl")))


def lines() -> list[str]:
    return [line for line in log_text().splitlines() if line]


# ----------------------------------------------------------------------------------------------- redaction


@pytest.mark.parametrize(("what", "text", "secret"), SECRETS_IN_TEXT, ids=[s[0] for s in SECRETS_IN_TEXT])
def test_secrets_in_text_never_reach_the_file(what: str, text: str, secret: str) -> None:
    events.append(events.make("tool.completed", harness="claude", session="s", tool={"name": "Bash"},
                              command={"command": text, "exit_code": 0}, output={"text": f"output: {text}"},
                              prompt={"text": [text, {"nested": text}]}))
    written = log_text()
    assert secret not in written
    assert "[REDACTED]" in written


@pytest.mark.parametrize(("key", "value"), SECRETS_BY_KEY, ids=[k for k, _ in SECRETS_BY_KEY])
def test_values_under_secret_labels_never_reach_the_file(key: str, value: str) -> None:
    events.append(events.make("tool.completed", harness="claude", session="s",
                              tool={"name": "WebFetch", "input": {"headers": {key: value}, "env": [{key: value}]}}))
    written = log_text()
    assert value not in written
    assert json.loads(written)["tool"]["input"]["headers"][key] == "[REDACTED]"


def test_redaction_keeps_ordinary_text() -> None:
    text = "pytest -k token_refresh  # the password field is empty by design"
    event = events.append(events.make("tool.completed", command={"command": text}))
    assert event["command"]["command"] == text


def test_a_json_secret_inside_a_string_is_redacted() -> None:
    events.append(events.make("tool.completed", command={"command": """curl -d '{"password": "hunter2horse"}'"""}))
    assert "hunter2horse" not in log_text()


@pytest.mark.parametrize("secret", ["pem", "token"])
def test_a_cut_never_leaves_part_of_a_secret_behind(tmp_path: Path, secret: str) -> None:
    if secret == "pem":
        body = "\n".join(PEM_BODY[i:i + 64] for i in range(0, len(PEM_BODY), 64)) * 30
        stdout = f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----\n" + "y" * 1000
        leaked = PEM_BODY[64:128]
    else:
        token = "ghp_R2d4Xk9QmZ7vB1nL5sT8wY3cE6hJ0aP2uF4g"
        stdout = token + "z" * (4000 - len(token) + 3)  # the cut falls three characters into the token
        leaked = token[3:]
    payload = {"session_id": "s", "cwd": str(tmp_path), "tool_name": "Bash", "tool_use_id": "toolu_1",
               "tool_input": {"command": "cat secrets"}, "tool_response": {"stdout": stdout, "stderr": ""}}
    events.append(normalize.event_for(ADAPTERS["claude"], "post-tool", payload, None))
    assert leaked not in log_text()


# -------------------------------------------------------------------------------------------------- caps


def test_long_strings_are_cut_with_a_note() -> None:
    event = events.append(events.make("prompt.submitted", prompt={"text": "a" * (events.MAX_FIELD + 500)}))
    text = event["prompt"]["text"]
    assert text.startswith("a" * events.MAX_FIELD)
    assert text.endswith("…[500 more characters cut]")
    assert len(text) < events.MAX_FIELD + 40


def test_long_lists_are_cut() -> None:
    event = events.append(events.make("tool.completed", file={"paths": [f"f{i}" for i in range(2000)], "op": "read"}))
    assert len(event["file"]["paths"]) == 500


def test_a_line_over_the_cap_loses_its_content_fields() -> None:
    big = ["b" * (events.MAX_FIELD - 10)] * 20  # 320 KB of output text
    events.append(events.make("tool.completed", session="s", command={"command": "make", "exit_code": 2},
                              output={"text": big}, prompt={"text": "x"}))
    [line] = lines()
    assert len(line) <= events.MAX_LINE
    written = json.loads(line)
    assert written["truncated"] is True
    assert "output" not in written and "prompt" not in written
    assert written["command"] == {"command": "make", "exit_code": 2}


def test_no_line_is_ever_over_the_cap() -> None:
    events.append(events.make("tool.completed", tool={"name": "Write", "input": {"chunks": ["c" * 15000] * 30}}))
    assert all(len(line) <= events.MAX_LINE for line in lines())


# ------------------------------------------------------------------------------------------------- ids


def test_one_tool_call_reported_twice_gets_one_id() -> None:
    first = events.append(events.make("tool.completed", harness="claude", session="s", ts=1_000,
                                      tool={"name": "Edit", "call_id": "toolu_1"}, file={"paths": ["a.py"]},
                                      output={"text": "from the hook"}))
    again = events.append(events.make("tool.completed", harness="claude", session="s", ts=9_000,
                                      tool={"name": "Edit", "call_id": "toolu_1"}, file={"paths": ["a.py"]},
                                      output={"text": "from the transcript"}))
    other = events.append(events.make("tool.completed", harness="claude", session="s", ts=1_000,
                                      tool={"name": "Edit", "call_id": "toolu_2"}, file={"paths": ["a.py"]}))
    assert first["event"]["id"] == again["event"]["id"] != other["event"]["id"]
    assert len(first["event"]["id"]) == 32


def test_events_without_a_call_id_are_ided_by_content() -> None:
    same = [events.append(events.make("session.start", harness="codex", session="s", ts=5)) for _ in range(2)]
    later = events.append(events.make("session.start", harness="codex", session="s", ts=6))
    assert same[0]["event"]["id"] == same[1]["event"]["id"] != later["event"]["id"]


# ---------------------------------------------------------------------------------- concurrent writers


WRITER = textwrap.dedent("""
    import sys
    from gitive.capture import events
    who = sys.argv[1]
    for n in range(int(sys.argv[2])):
        events.append(events.make("tool.completed", session=who, output={"text": who[0] * 12000 + str(n)},
                                  tool={"name": "Bash", "call_id": f"{who}-{n}"}))
""")


def test_concurrent_writers_never_interleave_lines() -> None:
    writers, each = 4, 30
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, f"w{k}", str(each)], env=dict(os.environ),
                              stderr=subprocess.PIPE) for k in range(writers)]
    for proc in procs:
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err.decode()
    parsed = [json.loads(line) for line in lines()]  # a torn or interleaved line would not parse
    assert len(parsed) == writers * each
    for k in range(writers):
        mine = [e for e in parsed if e["session"]["id"] == f"w{k}"]
        assert [e["tool"]["call_id"] for e in mine] == [f"w{k}-{n}" for n in range(each)]
        assert all(e["output"]["text"].startswith("w" * 12000) for e in mine)


# -------------------------------------------------------------------------------------------- rotation


def test_rotation_keeps_the_log_under_its_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(events, "ROTATE_BYTES", 4096)
    monkeypatch.setattr(events, "KEEP_BYTES", 16384)
    for n in range(300):
        events.append(events.make("tool.completed", session="s", tool={"name": "Bash", "call_id": f"c{n}"},
                                  output={"text": "o" * 300}))
        total = sum(p.stat().st_size for p in events.events_dir().glob("*.jsonl"))
        assert total < events.KEEP_BYTES
    rotated = sorted(events.events_dir().glob("events-*.jsonl"))
    assert len(rotated) >= 2
    assert all(p.stat().st_size >= events.ROTATE_BYTES for p in rotated)
    seen = [int(e["tool"]["call_id"][1:]) for e in events.read()]
    assert seen == sorted(seen) and seen[-1] == 299  # oldest dropped first, order kept across files
    assert seen[0] > 0
    assert all((p.stat().st_mode & 0o777) == 0o600 for p in events.events_dir().glob("*.jsonl"))


# ---------------------------------------------------------------------------------------------- reading


def test_read_filters_and_skips_torn_lines() -> None:
    events.append(events.make("session.start", session="a", ts=1_000))
    events.append(events.make("tool.completed", session="a", ts=2_000))
    with open(events.events_dir() / events.CURRENT, "a") as fh:
        fh.write('{"event": {"action": "tool.comp')  # a writer killed mid-line
        fh.write("\n")
    events.append(events.make("tool.completed", session="b", ts=3_000))
    assert [e["ts"] for e in events.read()] == [1_000, 2_000, 3_000]
    assert [e["ts"] for e in events.read(since_ms=2_000)] == [2_000, 3_000]
    assert [e["ts"] for e in events.read(session="a")] == [1_000, 2_000]
    assert [e["ts"] for e in events.read(actions=("tool.completed",))] == [2_000, 3_000]


def test_read_of_an_empty_home_is_empty() -> None:
    assert list(events.read()) == []


# ------------------------------------------------------------------------------------------ metadata only


def test_metadata_only_keeps_who_did_what_and_drops_what_anyone_said() -> None:
    event: dict[str, Any] = events.append(events.make(
        "tool.completed", harness="claude", session="s", cwd="/repo",
        tool={"name": "Bash", "call_id": "toolu_9", "input": {"command": "make", "body": "secretless text"}},
        command={"command": "make test", "exit_code": 2, "output": "the output"},
        file={"paths": ["src/a.py"], "op": "modify"}, prompt={"text": "what the person typed"},
        output={"text": "what the tool printed"}, diff={"text": "-a\n+b"}, content={"text": "file body"},
        message_text="a teammate's words"))
    meta = events.metadata_only(event)
    assert meta["tool"] == {"name": "Bash", "call_id": "toolu_9"}
    assert meta["command"] == {"command": "make test", "exit_code": 2}
    assert meta["file"] == {"paths": ["src/a.py"], "op": "modify"}
    assert meta["session"] == {"id": "s", "working_directory": "/repo"}
    assert meta["event"] == event["event"] and meta["harness"] == {"name": "claude"}
    for key in ("prompt", "output", "diff", "content", "message_text"):
        assert key not in meta
    text = json.dumps(meta)
    for said in ("what the person typed", "what the tool printed", "the output", "file body", "a teammate's",
                 "secretless text"):
        assert said not in text
    assert "prompt" in event  # the projection does not touch the original


def test_read_skips_rotated_files_closed_before_the_window() -> None:
    directory = events.events_dir()
    directory.mkdir(parents=True, exist_ok=True)
    old = events.make("tool.completed", session="old", ts=1_000)
    new = events.make("tool.completed", session="new", ts=5_000)
    (directory / f"events-{2_000 * 1_000_000}.jsonl").write_text(json.dumps(old) + "\n")
    (directory / f"events-{6_000 * 1_000_000}.jsonl").write_text(json.dumps(new) + "\n")
    assert [e["session"]["id"] for e in events.read(since_ms=3_000)] == ["new"]
    assert [e["session"]["id"] for e in events.read()] == ["old", "new"]


@pytest.mark.parametrize(("said", "shown"), [
    ("my password is hunter2", "my password is [REDACTED]"),
    ("the password for staging is Xk9!mmQ2.", "the password for staging is [REDACTED]."),
    ("PIN: 1234", "PIN: [REDACTED]"),
    ('password is "correct horse" ok', "password is [REDACTED] ok"),
    ("the token is expired", "the token is expired"),  # a plain word after "is" is no secret
    ("The secret is out", "The secret is out"),
    ("pass the tests", "pass the tests"),
])
def test_a_secret_said_in_words_is_redacted_and_prose_is_kept(said: str, shown: str) -> None:
    from gitive.capture.redact import redact_text

    assert redact_text(said) == shown
