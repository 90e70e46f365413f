"""Redaction of secrets before anything is written to the event log (stdlib only: runs in hooks)."""

from __future__ import annotations

import re
from typing import Any

MARK = "[REDACTED]"

# A key is secret when one of its words (split on _ - . and case changes) is a secret word: ``DB_PASSWORD``,
# ``apiKey``, ``auth-token``; not ``author``, ``passed``, ``tokenizer`` or ``bypass``.
_SECRET_KEY = re.compile(
    r"(?:^|[_.\-])(pass(?:word|wd|phrase)?|secrets?|tokens?|api[_-]?keys?|access[_-]?keys?|auth(?:orization)?|"
    r"credentials?|private[_-]?keys?|session[_-]?keys?|cookies?|client[_-]?secret)(?:$|[_.\-])", re.IGNORECASE)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

_PATTERNS = [
    # PEM blocks: private keys and certificates, whole block
    re.compile(r"-----BEGIN [A-Z0-9 ]*(PRIVATE KEY|CERTIFICATE)[A-Z ]*-----.*?-----END [A-Z0-9 ]*-----", re.DOTALL),
    # URL credentials: scheme://user:password@host
    re.compile(r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)"),
    # tokens by their documented prefixes
    re.compile(r"\b(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}"),
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"),
    re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}"),
    re.compile(r"\bsk-(ant-|proj-)?[A-Za-z0-9_\-]{20,}"),
    re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),
    re.compile(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{35}"),
    re.compile(r"\bnpm_[A-Za-z0-9]{36}"),
    re.compile(r"\bpypi-[A-Za-z0-9_\-]{50,}"),
    re.compile(r"\b(sk|rk|pk)_(live|test)_[A-Za-z0-9]{20,}"),
    re.compile(r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}"),  # JWT
    # labelled values in text: "Authorization: Bearer x", "password=x", "API_KEY: x"
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/\-]{12,}=*"),
    re.compile(r"(?i)(?<![a-z0-9_.-])((?:[a-z0-9_.-]*?)(?:password|passwd|secret|token|api[_-]?key|access[_-]?key|"
               r"client[_-]?secret))([\"']?\s*[:=]\s*)(\"[^\"]*\"|'[^']*'|[^\s,;&]+)"),
]


# a secret said in words, as people type it to an agent: "my password is hunter2", "the staging pw was x1!",
# "our API key for the sandbox is sk...": the next word, when it looks like one (a digit or a sign in it, or
# both cases, or quoted), so "the token is expired" keeps its meaning
_SAID = re.compile(r"(?i)\b((?:pass(?:word|phrase)?|pw|pwd|passcode|pin|secret|token|api[ _-]?key|access[ _-]?key)"
                   r"(?:\s+(?:for|of|to|on)\s+(?:the\s+)?[\w.\-/]+)?(?:\s*[:=]\s*|\s+(?:is|was)\s+))"
                   r"(\"[^\"]+\"|'[^']+'|\S+?)([.,;)]?)(?=\s|$)")


def _said(m: re.Match[str]) -> str:
    value = m.group(2)
    quoted = value[:1] in "\"'"
    if quoted or re.search(r"[^A-Za-z]", value) or (value != value.lower() and value != value.upper()):
        return m.group(1) + MARK + m.group(3)
    return m.group(0)


def redact_text(text: str) -> str:
    """Replace every secret the patterns recognise in ``text`` with ``[REDACTED]``."""
    for pattern in _PATTERNS[:-1]:
        text = pattern.sub(MARK, text)
    text = _PATTERNS[-1].sub(lambda m: f"{m.group(1)}{m.group(2)}{MARK}", text)
    return _SAID.sub(_said, text)


def redact(value: Any, key: str = "") -> Any:
    """Redact a JSON-like value: labelled keys lose their value, strings lose recognisable secrets."""
    if isinstance(value, dict):
        return {k: redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v, key) for v in value]
    if isinstance(value, str):
        if key and value and _SECRET_KEY.search(_CAMEL.sub("_", key)):
            return MARK
        return redact_text(value)
    return value
