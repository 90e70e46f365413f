"""The telling error line and the failing test of a failed run's output: what a person would quote.

A test runner's output is mostly banners (pytest's ``===== FAILURES =====``, cargo's ``failures:``, go's
``--- FAIL:``, Jest's ``FAIL ./x.test.js``) around the one line that says what went wrong: pytest's ``E``
line, Jest's matcher or thrown error under its ``●`` header, go's ``file_test.go:7: message``, cargo's panic
message after ``panicked at``, a traceback's last line. Each runner's shape is read first; a generic rule
(an exception line, then ``error:``, ``fatal:`` or ``panic:``) is the fallback, and a banner is never the
answer. The line returned is always a verbatim part of one output line (its markers and indentation
stripped), so a draft's quote can be found in the output it came from.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

MAX_LINE = 300


class Failure(NamedTuple):
    test: str  # the failing test as the runner names it ("" when none is named)
    line: str  # the telling error line ("" when the output has none)


_RULE_CHARS = set("=_-!*#~+<>. ")
_BANNERS = re.compile(
    r"^(?:FAILURES|ERRORS|short test summary info|warnings summary|test session starts|failures:|"
    r"test result: FAILED\b.*|FAIL(?:\s.*)?|ok\s.*|PASS\b.*|--- (?:FAIL|PASS|SKIP): .*|=== RUN .*|"
    r"Test Suites:.*|Tests:.*|Snapshots:.*|Time:.*|Ran all test suites.*|● Test suite failed to run|"
    r"running \d+ tests?|test .* \.\.\. (?:FAILED|ok|ignored)|error: test failed.*|error: could not compile.*|"
    r"warning: build failed.*|stack backtrace:|note: .*|Traceback \(most recent call last\):|"
    r"goroutine \d+ \[.*|exit status \d+|\d+ (?:failed|passed|error).* in [\d.]+s|Interrupted: .*)$")


def is_banner(line: str) -> bool:
    """A line that frames the output rather than says what failed (rules, section titles, summaries)."""
    text = line.strip()
    if not text:
        return True
    rule = sum(ch in _RULE_CHARS for ch in text)
    if rule >= 0.5 * len(text) or re.match(r"^[=_\-!*#~]{3,}", text):
        return True
    return bool(_BANNERS.match(text))


def _clip(line: str) -> str:
    return line.strip()[:MAX_LINE]


# ---------------------------------------------------------------------------------------------- pytest

_PYTEST_E = re.compile(r"^E {2,}(\S.*)$", re.MULTILINE)
_PYTEST_SUMMARY = re.compile(r"^(?:FAILED|ERROR) ([^\s]+?)(?: - .*)?$", re.MULTILINE)
_PYTEST_SECTION = re.compile(r"^_{3,} (?:ERROR at \w+ of |ERROR collecting )?(.+?) _{3,}$", re.MULTILINE)


def _pytest(output: str) -> Failure | None:
    lines = [m.group(1) for m in _PYTEST_E.finditer(output) if not m.group(1).startswith("+")]
    if not lines:
        return None
    summary = _PYTEST_SUMMARY.search(output)
    section = _PYTEST_SECTION.search(output)
    test = summary.group(1) if summary else (section.group(1) if section else "")
    return Failure(test, _clip(lines[0]))


# ------------------------------------------------------------------------------------------------ jest

_JEST_HEADER = re.compile(r"^\s*● (.+)$", re.MULTILINE)
_JEST_FILE = re.compile(r"^FAIL (\S+)", re.MULTILINE)
_EXCEPTION = re.compile(r"^\s*((?:[\w$.]+\.)?[A-Z][\w$]*(?:Error|Exception)\b(?::.*)?)$")


def _jest(output: str) -> Failure | None:
    header = _JEST_HEADER.search(output)
    if header is None:
        return None
    block = output[header.end():].split("\n  ● ", 1)[0].splitlines()
    body = [ln for ln in block if ln.strip() and not is_banner(ln) and not re.match(r"^\s*(?:>?\s*\d+ \||\|)", ln)]
    thrown = next((m.group(1) for ln in body if (m := _EXCEPTION.match(ln))), None)
    name = header.group(1).strip()
    if name == "Test suite failed to run":
        found = _JEST_FILE.search(output)
        name = found.group(1).removeprefix("./") if found else ""
        return Failure(name, _clip(thrown or (body[0] if body else "")))
    return Failure(name, _clip(body[0] if body else (thrown or "")))


# -------------------------------------------------------------------------------------------------- go

_GO_FAIL = re.compile(r"^\s*--- FAIL: (\S+)", re.MULTILINE)
_GO_RUN = re.compile(r"^=== RUN\s+(\S+)", re.MULTILINE)
_GO_MESSAGE = re.compile(r"^\s+([\w./-]+_test\.go:\d+: .+)$", re.MULTILINE)
_GO_PANIC = re.compile(r"^\s*(panic: .+?)(?: \[recovered\])?$", re.MULTILINE)
_GO_BUILD = re.compile(r"^((?:\./)?[\w./-]+\.go:\d+:\d+: .+)$", re.MULTILINE)
_GO_RACE = re.compile(r"^(WARNING: DATA RACE)$", re.MULTILINE)


def _go_test(output: str, at: int) -> str:
    """The test a line at ``at`` belongs to: the last ``=== RUN`` before it in verbose output (where a
    test's messages come before its verdict), else the last ``--- FAIL:`` before it, else the first."""
    runs = [m for m in _GO_RUN.finditer(output) if m.start() < at]
    if runs:
        return runs[-1].group(1)
    fails = list(_GO_FAIL.finditer(output))
    before = [m for m in fails if m.start() < at]
    return (before[-1] if before else fails[0]).group(1) if fails else ""


def _go(output: str) -> Failure | None:
    failed = bool(_GO_FAIL.search(output))
    for pattern in (_GO_PANIC, _GO_RACE, _GO_MESSAGE):
        found = pattern.search(output)
        if found and (failed or pattern is _GO_PANIC):
            return Failure(_go_test(output, found.start()), _clip(found.group(1)))
    built = _GO_BUILD.search(output)
    if built and ("[build failed]" in output or "[setup failed]" in output):
        return Failure("", _clip(built.group(1)))
    return None


# ----------------------------------------------------------------------------------------------- cargo

_CARGO_PANIC = re.compile(r"^thread '([^']+)'(?: \(\d+\))? panicked at [^\n]*?(?::\n|, )(.*)$", re.MULTILINE)
_RUST_ERROR = re.compile(r"^(error(?:\[E\d+\])?: .+)$", re.MULTILINE)


def _cargo(output: str) -> Failure | None:
    panic = _CARGO_PANIC.search(output)
    if panic:
        message = panic.group(2).strip() or next(
            (ln for ln in output[panic.end():].splitlines() if ln.strip()), "")
        return Failure(panic.group(1) if panic.group(1) != "main" else "", _clip(message))
    for found in _RUST_ERROR.finditer(output):
        if not is_banner(found.group(1)):
            return Failure("", _clip(found.group(1)))
    return None


# ------------------------------------------------------------------------------------------- traceback

_TRACEBACK = "Traceback (most recent call last):"
_LAST = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Failure)\b.*)$")


def _traceback(output: str) -> Failure | None:
    at = output.rfind(_TRACEBACK)
    if at < 0:
        return None
    for line in output[at + len(_TRACEBACK):].splitlines():
        if line and not line[0].isspace() and _LAST.match(line):
            return Failure("", _clip(line))
    return None


# --------------------------------------------------------------------------------------------- generic

_GENERIC = (re.compile(r"^\s*((?:[\w$.]+\.)?[A-Z][\w$]*(?:Error|Exception)\b.*)$", re.MULTILINE),
            re.compile(r"^\s*((?:error|fatal|panic|FATAL|ERROR)(?:\[\w+\])?: .+)$", re.MULTILINE),
            re.compile(r"^\s*(.*\b(?:assert(?:ion)?|failed|Error|error)\b.*)$", re.MULTILINE))


def _generic(output: str) -> Failure:
    for pattern in _GENERIC:
        for found in pattern.finditer(output):
            if not is_banner(found.group(1)):
                return Failure("", _clip(found.group(1)))
    return Failure("", next((_clip(ln) for ln in output.splitlines() if not is_banner(ln)), ""))


_RUNNERS: tuple[Callable[[str], Failure | None], ...] = (_pytest, _jest, _cargo, _go, _traceback)


def read(output: str) -> Failure:
    """The failing test and the telling error line of ``output`` (empty strings when it has neither)."""
    for runner in _RUNNERS:
        found = runner(output)
        if found is not None and found.line:
            return found
    return _generic(output)
