"""Every error gitive raises on purpose; the CLI prints these as one line and exits 1."""

from __future__ import annotations


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


class RefLocked(RaceLost):
    """A ref stays locked by another process (named in the message when gitive recorded it)."""
