"""The sandbox every command of prepared work runs in: Debian's ``bubblewrap`` (``bwrap``), never our own.

A worker is code the anchor does not trust (a model-driven harness, or a codemod over files anyone who can push
wrote), and so are the tests it runs afterwards. Each runs in namespaces of its own (user, mount, pid, ipc, uts,
cgroup and, unless its config says ``network: host``, network) over a root that holds only:

- the system, read-only: ``/usr``, ``/etc`` and the ``/bin``, ``/sbin``, ``/lib*`` links or folders;
- the paths its config lists under ``read:`` (its interpreter, its tools), read-only;
- its worktree and its fresh home (with the git folder of its own, :mod:`gitive.store.worktrees`), writable;
- the anchor repository's object folder, read-only, so ``git log`` works without the repository's config;
- a fresh ``/proc`` (its own processes only), ``/dev`` and an empty ``/tmp``.

``$GITIVE_HOME`` (``machine.key``, the anchor's keys and index), the anchor repository's ``.git`` (its remotes
and their credentials) and the anchor's home (ssh keys, credential helpers, agent sockets) are never mounted; a
listed ``read:`` path holding one of them gets an empty folder over it. ``bwrap`` itself starts with the
worker's environment, not the anchor's, so ``/proc/1/environ`` inside shows only what the worker was given.
Inside, the worker is uid 1000 of its own user namespace with no capabilities, and ``--new-session`` keeps it
from typing into the anchor's terminal. Without ``bwrap`` nothing runs: the run says how to install it.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

NETWORKS = ("none", "host")
SYSTEM = ("/usr", "/etc", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
INSIDE_UID = "1000"
MISSING = ("the anchor runs workers and their tests only inside bubblewrap, and `bwrap` is not installed: "
           "install it (Debian/Ubuntu: apt-get install bubblewrap)")


@dataclass(frozen=True)
class Policy:
    """What one worker may reach beyond the system: ``read`` paths, and ``network`` (none or host)."""

    read: tuple[str, ...] = ()
    network: str = "none"


@dataclass(frozen=True)
class Mounts:
    """The writable paths of one run, the read-only extras, and what must never be seen."""

    writable: tuple[Path, ...]
    read: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()


def available() -> str | None:
    """The ``bwrap`` binary, or None."""
    return shutil.which("bwrap")


@functools.lru_cache(maxsize=4)
def _works(bwrap: str) -> str | None:
    """Why ``bwrap`` cannot make a sandbox here (no user namespaces, a policy that forbids them), or None.
    Asked once per binary and process: a ``true`` in the same namespaces every run gets."""
    probe = [bwrap, "--unshare-all", "--die-with-parent", "--uid", INSIDE_UID, "--gid", INSIDE_UID, *_system(),
             "--proc", "/proc", "--dev", "/dev", "--", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=30, env={}, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap does not start: {exc}"
    if done.returncode == 0:
        return None
    said = " ".join(done.stderr.split())[:200] or f"exit {done.returncode}"
    return (f"bwrap cannot make a sandbox on this machine ({said}): the anchor runs no worker without one; "
            "allow user namespaces (for example sysctl kernel.unprivileged_userns_clone=1, or an AppArmor "
            "profile that lets bwrap create them)")


def _system() -> list[str]:
    args: list[str] = []
    for name in SYSTEM:
        path = Path(name)
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), name]
        elif path.is_dir():
            args += ["--ro-bind", name, name]
    return args


def _inside(path: Path, parents: Iterable[Path]) -> bool:
    return any(path == p or p in path.parents for p in parents)


def _binds(policy: Policy, mounts: Mounts) -> list[str]:
    """The config's read-only paths, then empty folders over anything hidden they would show, then the anchor's
    own read-only extras (the object folder) and the writable paths, which may sit inside a hidden one."""
    listed = [Path(p).resolve() for p in policy.read]
    args: list[str] = []
    for path in listed:
        if path.exists():
            args += ["--ro-bind", str(path), str(path)]
    for path in (p.resolve() for p in mounts.hidden):
        if _inside(path, listed) and path.exists():
            args += ["--tmpfs", str(path)]
    for path in (p.resolve() for p in mounts.read):
        args += ["--ro-bind", str(path), str(path)]
    for path in (p.resolve() for p in mounts.writable):
        args += ["--bind", str(path), str(path)]
    return args


def command(policy: Policy, mounts: Mounts, cwd: Path, words: Iterable[str]) -> list[str]:
    """The ``bwrap`` command line that runs ``words`` in ``cwd`` under ``policy``.

    Raises:
        FileNotFoundError: ``bwrap`` is not installed, or cannot make a sandbox here (the message says what to do).
    """
    bwrap = available()
    if bwrap is None:
        raise FileNotFoundError(MISSING)
    broken = _works(bwrap)
    if broken:
        raise FileNotFoundError(broken)
    share = ["--share-net"] if policy.network == "host" else []
    return [bwrap, "--unshare-all", *share, "--die-with-parent", "--new-session",
            "--uid", INSIDE_UID, "--gid", INSIDE_UID, "--cap-drop", "ALL",
            *_system(), "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/run",
            *_binds(policy, mounts), "--chdir", str(cwd.resolve()), "--", *words]
