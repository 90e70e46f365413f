"""Every error gitive raises on purpose; the CLI prints these as one line and exits 1."""

from __future__ import annotations

QUOTE_LIMIT = 80  # characters of an argument an error quotes back: an argument may be 100 KB


def quoted(value: object, limit: int = QUOTE_LIMIT) -> str:
    """``repr(value)``, cut to ``limit`` characters of the value with its full length said, for messages."""
    text = str(value)
    if len(text) <= limit:
        return repr(text)
    return f"{text[:limit]!r}… ({len(text):,} characters)"


def clip_words(message: str, limit: int = QUOTE_LIMIT) -> str:
    """``message`` with every run of more than ``limit`` non-space characters cut, unless it names a file or
    folder that exists (a lock, a log): the CLI's last guard against an error that quotes a whole argument."""
    import os
    import re

    def cut(found: re.Match[str]) -> str:
        word = found.group()
        path = word.strip("'\"`()[]{},;:.")
        folder = os.path.dirname(path)
        if len(word) < 4096 and path.startswith("/") and folder != "/" and os.path.lexists(folder):
            return word
        return f"{word[:limit]}…"

    return re.sub(rf"\S{{{limit + 1},}}", cut, message)


class GitiveError(Exception):
    """An expected failure with a message written for people: what is wrong and what to do."""


class NotARepository(GitiveError):
    pass


class NoTeam(GitiveError):
    pass


class KeyFileError(GitiveError):
    pass


class InvalidRecord(GitiveError):
    """A record that fails its schema or a write-time rule; nothing was written."""


class InviteError(GitiveError):
    pass


class GitCommandError(GitiveError):
    """A git command failed; keeps the command, exit code and both streams."""

    def __init__(self, cmd: tuple[str, ...], returncode: int, stdout: str, stderr: str) -> None:
        self.cmd = cmd
        self.returncode = returncode
        self.stdout = stdout
        self.stderr = stderr
        super().__init__(self._summary())

    def _summary(self) -> str:
        last = next((ln.strip() for ln in reversed(self.stderr.splitlines()) if ln.strip()), "")
        return f"`{' '.join(self.cmd)}` failed (exit {self.returncode}): {last or 'no message'}"


class RemoteError(GitiveError):
    """A remote could not be reached, or refused what was pushed."""


class RaceLost(GitiveError):
    """A compare-and-swap ref update kept losing to other writers."""


class NotAllowed(GitiveError):
    """A decision this person may not make, or that readers would not count; nothing was written."""


class RefLocked(RaceLost):
    """A ref stays locked by another process (named in the message when gitive recorded it)."""
