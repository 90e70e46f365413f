"""Real repositories for tests: hermetic git settings, bare remotes, clones and a ``git daemon``.

Everything here runs the real ``git`` CLI or pygit2 against temp directories; nothing is mocked.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

AUTHOR_NAME = "Gitive Test"
AUTHOR_EMAIL = "test@gitive.invalid"
FIXED_DATE = "2024-01-01T00:00:00+00:00"

# Variables that would point git at another repository or leak a user's setup into a test.
_LEAKY = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR",
          "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES", "GIT_CONFIG",
          "GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_EXEC_PATH", "GIT_SSH", "GIT_SSH_COMMAND",
          "GIT_ASKPASS", "SSH_ASKPASS", "GIT_TRACE", "GIT_TRACE_PACKET", "GIT_PAGER", "GIT_EDITOR",
          "GITIVE_HOME", "GITIVE_NOW_MS", "GITIVE_CLOCK_FILE", "XDG_CONFIG_HOME")


def hermetic_env(base: Path) -> tuple[dict[str, str], tuple[str, ...]]:
    """Environment for hermetic git under ``base``: returns ``(variables to set, variables to unset)``.

    ``HOME`` becomes ``base/home`` with a global config that holds only an identity and the default branch
    (gitive's own git helper drops ``GIT_AUTHOR_*``, so a commit it runs needs the identity from config);
    the system config is skipped and new repositories get an empty template directory.
    """
    home = base / "home"
    templates = base / "git-templates"
    home.mkdir(parents=True, exist_ok=True)
    templates.mkdir(parents=True, exist_ok=True)
    gitconfig = home / ".gitconfig"
    gitconfig.write_text(
        f"[user]\n\tname = {AUTHOR_NAME}\n\temail = {AUTHOR_EMAIL}\n"
        "[init]\n\tdefaultBranch = main\n"
        "[commit]\n\tgpgSign = false\n"
        "[tag]\n\tgpgSign = false\n"
    )
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": str(gitconfig),
        "GIT_TEMPLATE_DIR": str(templates),
        "GIT_AUTHOR_NAME": AUTHOR_NAME,
        "GIT_AUTHOR_EMAIL": AUTHOR_EMAIL,
        "GIT_COMMITTER_NAME": AUTHOR_NAME,
        "GIT_COMMITTER_EMAIL": AUTHOR_EMAIL,
        "GIT_AUTHOR_DATE": FIXED_DATE,
        "GIT_COMMITTER_DATE": FIXED_DATE,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_MERGE_AUTOEDIT": "no",
        "GIT_PROTOCOL_FROM_USER": "1",
        # Person keys at argon2id's minimum cost, kept there (gitive honours it only for a GITIVE_HOME in the
        # temp dir; tests of the real cost unset it).
        "GITIVE_TEST_KDF": "minimum",
    }
    unset = tuple(k for k in _LEAKY if k not in env)
    return env, unset


def pin_libgit2_config(base: Path) -> None:
    """Point libgit2's global, XDG and system config search paths at ``base/home`` (and empty dirs).

    libgit2 reads ``HOME`` once, when pygit2 is imported, and ignores ``GIT_CONFIG_NOSYSTEM``; test modules
    import pygit2 before any fixture runs, so the search paths are set explicitly.
    """
    import pygit2

    empty = base / "empty-config"
    empty.mkdir(parents=True, exist_ok=True)
    levels = pygit2.enums.ConfigLevel
    pygit2.settings.search_path[levels.GLOBAL] = str(base / "home")
    pygit2.settings.search_path[levels.XDG] = str(empty)
    pygit2.settings.search_path[levels.SYSTEM] = str(empty)
    pygit2.settings.search_path[levels.PROGRAMDATA] = str(empty)


def run_git(args: Sequence[str | os.PathLike[str]], cwd: Path | str | None = None, *, check: bool = True,
            input: bytes | None = None, timeout: float = 60) -> str:
    """Run ``git <args>`` in ``cwd`` with the (hermetic) test environment; return stdout as text.

    Raises:
        subprocess.CalledProcessError: git failed and ``check`` is true (stderr is in the message).
    """
    cmd = ["git", *map(str, args)]
    proc = subprocess.run(cmd, cwd=cwd, input=input, capture_output=True, timeout=timeout,
                          stdin=None if input is not None else subprocess.DEVNULL)
    if check and proc.returncode != 0:
        raise subprocess.CalledProcessError(
            proc.returncode, cmd, proc.stdout,
            proc.stderr.decode("utf-8", "replace") or "(no stderr)",
        )
    return proc.stdout.decode("utf-8", "replace")


def init_bare(path: Path) -> Path:
    """``git init --bare`` at ``path``; return it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    run_git(["init", "--quiet", "--bare", "--initial-branch=main", path])
    return path


def init_repo(path: Path, *, first_commit: bool = True) -> Path:
    """A non-bare repository at ``path`` on branch ``main`` (with one commit of ``README`` unless told not)."""
    path.mkdir(parents=True, exist_ok=True)
    run_git(["init", "--quiet", "--initial-branch=main", path])
    if first_commit:
        commit_file(path, "README", "hello\n", "first commit")
    return path


def commit_file(repo: Path, name: str, content: str, message: str | None = None) -> str:
    """Write ``name`` in ``repo``'s work tree, commit it (and only it), and return the new commit id."""
    target = repo / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(content)
    run_git(["add", "--", name], cwd=repo)
    run_git(["commit", "--quiet", "--no-verify", "--no-gpg-sign", "-m", message or f"add {name}", "--", name],
            cwd=repo)
    return run_git(["rev-parse", "HEAD"], cwd=repo).strip()


def has_refs(url_or_path: str | Path) -> bool:
    """True when the repository at ``url_or_path`` has any ref at all."""
    return bool(run_git(["ls-remote", str(url_or_path)]).strip())


def clone(url_or_path: str | Path, dest: Path) -> Path:
    """Clone into ``dest``; if the remote is empty, commit a README on ``main`` and push it there first."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    run_git(["clone", "--quiet", str(url_or_path), dest])
    if not run_git(["rev-parse", "--verify", "--quiet", "HEAD"], cwd=dest, check=False).strip():
        run_git(["checkout", "--quiet", "-B", "main"], cwd=dest)
        commit_file(dest, "README", "hello\n", "first commit")
        run_git(["push", "--quiet", "origin", "main:main"], cwd=dest)
    return dest


def ref_tips(repo: Path, prefix: str = "refs/") -> dict[str, str]:
    """Map every ref under ``prefix`` to its object id, as the git CLI sees them."""
    out = run_git(["for-each-ref", "--format=%(refname) %(objectname)", prefix], cwd=repo)
    return dict(line.split(" ", 1) for line in out.splitlines() if line)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 10.0) -> bool:
    """Wait until something accepts on 127.0.0.1:``port``; false if ``proc`` exits or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
        time.sleep(0.02)
    return False


@dataclass
class GitDaemon:
    """A running ``git daemon`` serving ``base``; call it with a repository name to get its URL."""

    base: Path
    port: int
    proc: subprocess.Popen[bytes]

    def url(self, name: str) -> str:
        return f"git://127.0.0.1:{self.port}/{name}"

    def __call__(self, name: str, *, create: bool = True) -> str:
        """URL of ``base/name``, creating it as an empty bare repository first unless it exists."""
        if create and not (self.base / name).exists():
            init_bare(self.base / name)
        return self.url(name)


def stop_process_group(proc: subprocess.Popen[bytes]) -> None:
    """End ``proc`` and the children in its process group (it was started with a new session)."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, 15)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, 9)
            proc.wait(timeout=5)


@contextlib.contextmanager
def git_daemon(base: Path, attempts: int = 5) -> Iterator[GitDaemon]:
    """Run ``git daemon`` (export-all, receive-pack enabled) on a free local port; stop it on exit."""
    base.mkdir(parents=True, exist_ok=True)
    last_err = ""
    for _ in range(attempts):
        port = free_port()
        proc = subprocess.Popen(
            ["git", "daemon", "--reuseaddr", "--export-all", "--enable=receive-pack", "--informative-errors",
             f"--base-path={base}", "--listen=127.0.0.1", f"--port={port}", str(base)],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True,
        )
        if wait_for_port(port, proc):
            try:
                yield GitDaemon(base, port, proc)
            finally:
                stop_process_group(proc)
                if proc.stderr:
                    proc.stderr.close()
            return
        stop_process_group(proc)  # lost the port to another process, or git failed: try another port
        last_err = proc.stderr.read().decode("utf-8", "replace") if proc.stderr else ""
        if proc.stderr:
            proc.stderr.close()
    raise RuntimeError(f"git daemon did not start: {last_err.strip() or 'no message'}")
