"""The real harness binaries, pinned, installed once from the npm registry into a cache outside the repository.

Each harness is an npm package at an exact version; its native binary comes in a platform package npm picks
(``@anthropic-ai/claude-code-linux-x64``, ``@openai/codex-linux-x64``), and Gemini CLI is JavaScript run by
node. They are installed with ``npm install`` into ``$GITIVE_HARNESS_CACHE`` (default
``${XDG_CACHE_HOME:-~/.cache}/gitive-test-harnesses``), one folder per ``<package>@<version>``, so a fresh
clone's ``make test`` installs each once and every later run, worktree and test worker shares it. The install
happens in a temporary folder renamed into place when it has finished (and under a lock), so a test worker
never sees half an install; ``python -m testing.harness.install`` installs them all (``.ci/run`` does).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Pin:
    name: str  # gitive's name for the harness
    package: str
    version: str
    binary: str  # the command the package installs
    node: int = 0  # the node major version it needs (0: a native binary, no node)

    @property
    def folder(self) -> str:
        return f"{self.package.replace('/', '+')}@{self.version}"


# Exact versions: a harness that changes under the tests is a different test. Bump them on purpose.
PINS = {
    "claude": Pin("claude", "@anthropic-ai/claude-code", "2.1.332", "claude"),
    "codex": Pin("codex", "@openai/codex", "0.171.0", "codex"),
    "gemini": Pin("gemini", "@google/gemini-cli", "0.61.0", "gemini", node=20),
}


class Missing(RuntimeError):
    """A harness cannot be installed or run here (the message says why)."""


def cache_root() -> Path:
    explicit = os.environ.get("GITIVE_HARNESS_CACHE")
    if explicit:
        return Path(explicit)
    # The account's home from the password database, not $HOME: tests run with a throwaway HOME.
    base = os.environ.get("XDG_CACHE_HOME") or str(Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache")
    return Path(base) / "gitive-test-harnesses"


def binary(pin: Pin, root: Path | None = None) -> Path:
    return (root or cache_root()) / pin.folder / "node_modules" / ".bin" / pin.binary


@contextlib.contextmanager
def _locked(root: Path) -> Iterator[None]:
    root.mkdir(parents=True, exist_ok=True)
    with open(root / ".lock", "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _node_major() -> int:
    node = shutil.which("node")
    if not node:
        return 0
    out = subprocess.run([node, "--version"], capture_output=True, text=True, timeout=30).stdout
    try:
        return int(out.strip().lstrip("v").split(".")[0])
    except ValueError:
        return 0


def _npm_install(pin: Pin, root: Path) -> None:
    npm = shutil.which("npm")
    if not npm:
        raise Missing(f"npm is not on PATH: cannot install {pin.package}@{pin.version} (`.ci/run` installs it)")
    work = Path(tempfile.mkdtemp(prefix=f".{pin.folder}.", dir=root))
    try:
        (work / "package.json").write_text('{"private": true}\n')
        done = subprocess.run([npm, "install", "--no-save", "--no-audit", "--no-fund", "--loglevel=error",
                               f"{pin.package}@{pin.version}"], cwd=work, capture_output=True, text=True,
                              timeout=900, stdin=subprocess.DEVNULL)
        # The binary is looked for where npm put it: the folder is renamed into place only after this check.
        if done.returncode != 0 or not (work / "node_modules" / ".bin" / pin.binary).exists():
            raise Missing(f"npm install {pin.package}@{pin.version} failed: {done.stderr.strip()[-2000:]}")
        if not (root / pin.folder).exists():
            os.replace(work, root / pin.folder)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def ensure(name: str) -> Path:
    """The binary of harness ``name`` at its pinned version, installed first if it is not yet.

    Raises:
        Missing: npm or the right node is not there, or the install failed.
    """
    pin = PINS[name]
    root = cache_root()
    path = binary(pin, root)
    if not path.exists():
        with _locked(root):
            if not path.exists():
                _npm_install(pin, root)
    if pin.node and _node_major() < pin.node:
        raise Missing(f"{pin.package} needs node {pin.node} or later on PATH")
    if not os.access(path, os.X_OK):
        raise Missing(f"{path} is not executable")
    return path


def version_of(name: str) -> str:
    """What the installed binary says its version is (checked against the pin)."""
    out = subprocess.run([str(ensure(name)), "--version"], capture_output=True, text=True, timeout=60,
                         stdin=subprocess.DEVNULL).stdout
    return out.strip()


def main(argv: list[str]) -> int:
    for name in argv or list(PINS):
        try:
            path = ensure(name)
        except Missing as exc:
            print(f"{name}: {exc}", file=sys.stderr)
            return 1
        print(f"{name}: {PINS[name].package}@{PINS[name].version} at {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
