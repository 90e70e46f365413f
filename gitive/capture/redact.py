"""Redaction of secrets before anything is written to the event log (stdlib only: runs in hooks)."""

from __future__ import annotations

import re

# typing costs each hook process about 5 ms to import; with postponed annotations it is needed only by checkers
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


MARK = "[REDACTED]"

class _Rule:
    """A pattern compiled at its first use, and tried only on text that holds one of its literals (every match
    holds one). Compiling all twenty at import cost every hook call about 10 ms of CPU (CPython compiles regular
    expressions in Python), and most of what a hook records (paths, ids, short prompts) holds none of them."""

    __slots__ = ("_compiled", "flags", "needs", "source")

    def __init__(self, source: str, needs: tuple[str, ...], flags: int = 0) -> None:
        self.source, self.needs, self.flags = source, needs, flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def pattern(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.source, self.flags)
        return self._compiled

    def could_match(self, text: str) -> bool:
        hay = _folded(text) if self.flags & re.IGNORECASE else text
        return any(literal in hay for literal in self.needs)


# What re.IGNORECASE matches to an ASCII letter besides its two cases: dotted and dotless i, long s, Kelvin sign.
_FOLD = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})


def _folded(text: str) -> str:
    """``text`` lowered so that every ASCII literal an IGNORECASE pattern matches in it appears in lower case."""
    return text.translate(_FOLD).lower()


_I = re.IGNORECASE
# A key is secret when one of its words (split on _ - . and case changes) is a secret word: ``DB_PASSWORD``,
# ``apiKey``, ``auth-token``; not ``author``, ``passed``, ``tokenizer`` or ``bypass``.
_SECRET_KEY = _Rule(
    r"(?:^|[_.\-])(pass(?:word|wd|phrase)?|secrets?|tokens?|api[_-]?keys?|access[_-]?keys?|auth(?:orization)?|"
    r"credentials?|private[_-]?keys?|session[_-]?keys?|cookies?|client[_-]?secret)(?:$|[_.\-])",
    ("pass", "secret", "token", "key", "auth", "credential", "cookie"), _I)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

_PATTERNS = [
    # PEM blocks: private keys and certificates, whole block
    _Rule(r"-----BEGIN [A-Z0-9 ]*(PRIVATE KEY|CERTIFICATE)[A-Z ]*-----.*?-----END [A-Z0-9 ]*-----",
          ("-----BEGIN ",), re.DOTALL),
    # URL credentials: scheme://user:password@host
    _Rule(r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)", ("://",)),
    # tokens by their documented prefixes
    _Rule(r"\b(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    _Rule(r"\bgithub_pat_[A-Za-z0-9_]{20,}", ("github_pat_",)),
    _Rule(r"\bglpat-[A-Za-z0-9_\-]{20,}", ("glpat-",)),
    _Rule(r"\bsk-(ant-|proj-)?[A-Za-z0-9_\-]{20,}", ("sk-",)),
    _Rule(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}", ("xox",)),
    _Rule(r"\b(AKIA|ASIA)[0-9A-Z]{16}\b", ("AKIA", "ASIA")),
    _Rule(r"\bAIza[0-9A-Za-z_\-]{35}", ("AIza",)),
    _Rule(r"\bnpm_[A-Za-z0-9]{36}", ("npm_",)),
    _Rule(r"\bpypi-[A-Za-z0-9_\-]{50,}", ("pypi-",)),
    _Rule(r"\b(sk|rk|pk)_(live|test)_[A-Za-z0-9]{20,}", ("_live_", "_test_")),
    _Rule(r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}", ("eyJ",)),  # JWT
    # labelled values in text: "Authorization: Bearer x", "password=x", "API_KEY: x"
    _Rule(r"(?i)\bbearer\s+[A-Za-z0-9._~+/\-]{12,}=*", ("bearer",), _I),
    _Rule(r"(?i)(?<![a-z0-9_.-])((?:[a-z0-9_.-]*?)(?:password|passwd|secret|token|api[_-]?key|access[_-]?key|"
          r"client[_-]?secret))([\"']?\s*[:=]\s*)(\"[^\"]*\"|'[^']*'|[^\s,;&]+)", ("pass", "secret", "token", "key"), _I),
]


# a secret said in words, as people type it to an agent: "my password is hunter2", "the staging pw was x1!",
# "our API key for the sandbox is sk...": the next word, when it looks like one (a digit or a sign in it, or
# both cases, or quoted), so "the token is expired" keeps its meaning
_SAID = _Rule(r"(?i)\b((?:pass(?:word|phrase)?|pw|pwd|passcode|pin|secret|token|api[ _-]?key|access[ _-]?key)"
              r"(?:\s+(?:for|of|to|on)\s+(?:the\s+)?[\w.\-/]+)?(?:\s*[:=]\s*|\s+(?:is|was)\s+))"
              r"(\"[^\"]+\"|'[^']+'|\S+?)([.,;)]?)(?=\s|$)", ("pass", "pw", "pin", "secret", "token", "key"), _I)


def _said(m: re.Match[str]) -> str:
    value = m.group(2)
    quoted = value[:1] in "\"'"
    if quoted or re.search(r"[^A-Za-z]", value) or (value != value.lower() and value != value.upper()):
        return m.group(1) + MARK + m.group(3)
    return m.group(0)


def redact_text(text: str) -> str:
    """Replace every secret the patterns recognise in ``text`` with ``[REDACTED]``."""
    for rule in _PATTERNS[:-1]:
        if rule.could_match(text):
            text = rule.pattern.sub(MARK, text)
    if _PATTERNS[-1].could_match(text):
        text = _PATTERNS[-1].pattern.sub(lambda m: f"{m.group(1)}{m.group(2)}{MARK}", text)
    return _SAID.pattern.sub(_said, text) if _SAID.could_match(text) else text


def redact(value: Any, key: str = "") -> Any:
    """Redact a JSON-like value: labelled keys lose their value, strings lose recognisable secrets."""
    if isinstance(value, dict):
        return {k: redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v, key) for v in value]
    if isinstance(value, str):
        if key and value and _SECRET_KEY.could_match(key) and _SECRET_KEY.pattern.search(_CAMEL.sub("_", key)):
            return MARK
        return redact_text(value)
    return value
