"""Redaction compiles a pattern only for text that holds one of its literals: the same output as compiling
and running every pattern, including for text whose case only re.IGNORECASE folds (long s, dotless i, Kelvin
sign), and no compiling at all for what a quiet hook call records."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from gitive.capture import redact
from tests.capture.test_events import PEM, SECRETS_BY_KEY, SECRETS_IN_TEXT

SAID = ["my password is hunter2", "the password for staging is Xk9!mmQ2.", "PIN: 1234",
        'password is "correct horse" ok', "the token is expired", "The secret is out", "pass the tests",
        "our API key for the sandbox is Zz9", "pw: x1!", "Authorization: Bearer abcdefghijklmnop",
        'curl -d \'{"password": "hunter2horse"}\'', "DB_PASSWORD=s3cr3t ./run", "ordinary text, nothing here"]


def _eager(text: str) -> str:
    """Every pattern compiled and run, as redaction did before it compiled them lazily."""
    rules = [re.compile(r.source, r.flags) for r in redact._PATTERNS]
    for pattern in rules[:-1]:
        text = pattern.sub(redact.MARK, text)
    text = rules[-1].sub(lambda m: f"{m.group(1)}{m.group(2)}{redact.MARK}", text)
    return re.compile(redact._SAID.source, redact._SAID.flags).sub(redact._said, text)


def _variants(text: str) -> list[str]:
    return [text, text.upper(), text.lower(), text.swapcase(), text.replace("s", "\u017f"),
            text.replace("i", "\u0131"), text.replace("k", "\u212a").replace("K", "\u212a"),
            text.replace("I", "\u0130"), text.title()]


@pytest.mark.parametrize("text", [t for _, t, _ in SECRETS_IN_TEXT] + SAID + [PEM])
def test_lazy_patterns_redact_exactly_what_every_pattern_would(text: str) -> None:
    for variant in _variants(text):
        assert redact.redact_text(variant) == _eager(variant), variant


def test_a_key_folded_by_ignorecase_is_still_a_secret_label() -> None:
    for key, value in SECRETS_BY_KEY:
        for variant in _variants(key):
            expected = re.compile(redact._SECRET_KEY.source, redact._SECRET_KEY.flags).search(
                redact._CAMEL.sub("_", variant))
            assert (redact.redact({variant: value})[variant] == redact.MARK) == bool(expected), variant


def test_a_quiet_hook_event_compiles_no_pattern() -> None:
    payload = {"session_id": "0b7d2210-7da5-4221-88e3-aef4c814b2be", "cwd": "/home/dev/src/api",
               "transcript_path": "/home/dev/.claude/projects/api/0b7d2210.jsonl", "hook_event_name": "Stop",
               "prompt": "say hi"}
    code = ("import json, sys; from gitive.capture import redact; redact.redact(json.loads(sys.argv[1]))\n"
            "print(sum(r._compiled is not None for r in [*redact._PATTERNS, redact._SAID, redact._SECRET_KEY]))")
    done = subprocess.run([sys.executable, "-c", code, json.dumps(payload)], capture_output=True, text=True,
                          check=True, timeout=60)
    assert done.stdout.strip() == "0"
