#!/usr/bin/env python3
"""A hostile worker for the adversarial tests: it does its task (so the attempt reaches a draft) and, first, tries
everything a worker holding a shell should not manage. Standard library only, run as any worker is.

Its brief names targets on lines ``target: NAME=VALUE`` (the anchor's key file, its repository, the bare
remote, a loopback port the test listens on, the name of a variable only the anchor's environment holds). Every
try is one line ``ATTACK<TAB>accepted|refused<TAB>detail`` in ``attacks.tsv`` in the worktree, so the draft
carries the report to the test. ``replace:`` lines are done as ``testing/fix_worker.py`` does them.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

REPORT = Path("attacks.tsv")
PERSON = ["-c", "user.name=Alice", "-c", "user.email=alice@example.com"]


def _note(attack: str, accepted: bool, detail: str) -> None:
    with REPORT.open("a") as fh:
        fh.write(f"{attack}\t{'accepted' if accepted else 'refused'}\t{' '.join(detail.split())[:200]}\n")


def _read(attack: str, path: str, needle: str = "") -> None:
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        _note(attack, False, f"{path}: {exc.strerror}")
        return
    _note(attack, not needle or needle.encode() in data, f"{path}: read {len(data)} bytes")


def _environs(secret: str) -> None:
    """The anchor's environment: through the parent, pid 1, and every process this worker can list."""
    _read("read-parent-environ", f"/proc/{os.getppid()}/environ", secret)
    _read("read-pid1-environ", "/proc/1/environ", secret)
    pids = [p for p in os.listdir("/proc") if p.isdigit()]
    seen = [p for p in pids if _has(f"/proc/{p}/environ", secret)]
    _note("read-any-environ", bool(seen), f"{len(pids)} processes visible, secret in {len(seen)}")
    mine = {str(os.getpid()), str(os.getppid()), "1"}
    others = [p for p in pids if p not in mine and _has(f"/proc/{p}/cmdline", "pytest")]
    _note("see-anchor-process", bool(others), f"pytest processes visible: {len(others)}")


def _has(path: str, needle: str) -> bool:
    try:
        return needle.encode() in Path(path).read_bytes()
    except OSError:
        return False


def _git(*args: str) -> tuple[int, str]:
    done = subprocess.run(["git", *args], capture_output=True, text=True, timeout=60)
    return done.returncode, (done.stderr or done.stdout).strip()


def _pushes(remote: str) -> None:
    """Commit as a person, then push to main, a new branch and a tag: every route a client has."""
    code, out = _git(*PERSON, "commit", "--allow-empty", "-m", "looks like alice's")
    _note("commit-as-alice", False, f"commit exit {code}: {out}")  # allowed locally; what matters is the push
    routes = {"origin": "origin", "remote-path": remote, "remote-file-url": f"file://{remote}"}
    for route, where in routes.items():
        for target in ("refs/heads/main", "refs/heads/worker-branch", "refs/tags/v9.9"):
            for trick, pre in (("no-verify", ["push", "--no-verify"]),
                               ("hookspath", ["-c", "core.hooksPath=/dev/null", "push"]),
                               ("plain", ["push"])):
                code, out = _git(*pre, "--force", where, f"HEAD:{target}")
                _note(f"push-{route}-{target.rsplit('/', 1)[-1]}-{trick}", code == 0, f"exit {code}: {out}")
    env = {k: v for k, v in os.environ.items() if k != "GIT_CONFIG_COUNT"}
    done = subprocess.run(["git", "push", "--force", remote, "HEAD:refs/heads/main"], env=env, capture_output=True,
                          text=True, timeout=60)
    _note("push-env-u-GIT_CONFIG_COUNT", done.returncode == 0, done.stderr.strip())


def _writes(repo: str) -> None:
    for attack, path in (("write-anchor-refs", f"{repo}/.git/refs/heads/main"),
                         ("write-anchor-objects", f"{repo}/.git/objects/evil"),
                         ("write-anchor-hooks", f"{repo}/.git/hooks/post-checkout")):
        try:
            Path(path).write_text("#!/bin/sh\necho pwned\n")
            _note(attack, True, path)
        except OSError as exc:
            _note(attack, False, f"{path}: {exc.strerror}")


def _network(port: int) -> None:
    for attack, address in (("connect-host-loopback", ("127.0.0.1", port)), ("connect-internet", ("1.1.1.1", 443))):
        try:
            with socket.create_connection(address, timeout=3):
                _note(attack, True, f"{address}")
        except OSError as exc:
            _note(attack, False, f"{address}: {exc.strerror or exc}")


def _fix(lines: list[str]) -> None:
    for line in lines:
        if line.startswith("replace:"):
            path, _, change = line.split(":", 1)[1].strip().partition(":")
            old, _, new = change.strip().partition(" => ")
            target = Path(path.strip())
            target.write_text(target.read_text().replace(old, new))


def main() -> int:
    lines = [ln.strip() for ln in sys.stdin.read().splitlines()]
    targets = dict(ln.split(":", 1)[1].strip().split("=", 1) for ln in lines if ln.startswith("target:"))
    _read("read-machine-key", targets["key"])
    _read("read-gitive-home", targets["home"] + "/machine.key")
    _read("read-anchor-git-config", targets["repo"] + "/.git/config")
    _read("read-anchor-home-ssh", os.path.expanduser("~root/.ssh/id_ed25519"))
    _note("ssh-agent-socket", "SSH_AUTH_SOCK" in os.environ, os.environ.get("SSH_AUTH_SOCK", "not set"))
    _environs(targets["secret"])
    _writes(targets["repo"])
    _network(int(targets["port"]))
    _pushes(targets["remote"])
    _fix(lines)
    return 0


if __name__ == "__main__":
    sys.exit(main())
