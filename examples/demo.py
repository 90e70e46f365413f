"""`make demo`: three machines and one bare remote, all in a temporary directory.

Alice founds a team and invites Bob and Carol; each joins from a clone while Alice is offline; everyone
syncs and sees the same roster. Alice's agent proposes a lesson, Bob reviews it at his terminal, and Carol's
agent is shown it when its session starts. Carol writes to Alice's live session, which sees the message at
its next tool call. Alice retracts the lesson and it is gone everywhere. An always-on box joins as the team's
anchor; Bob's agent owes "remove the grace period once auth-rotation is merged", Alice merges the branch on the
remote, and the anchor, started after the merge, fires it late. Then Mallory, who is not a member, forges
entries and every reader refuses them. Nothing is left behind outside the temporary directory.

The demo checks its own headline claims and exits 1 when one does not hold: the card carried the verified
lesson at Carol's session start, Carol's message arrived at Alice's next tool call exactly once, and both
forgeries were refused with the roster unchanged. ``--load`` runs it all under the CPU load of a build (2
busy processes per core, ``testing/load.py``), as a developer's machine is while agents work:

    make demo                 # or: .venv/bin/python examples/demo.py
    make demo-load            # or: .venv/bin/python examples/demo.py --load
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pty
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

GITIVE = str(Path(sys.executable).with_name("gitive"))
HOOK = str(Path(sys.executable).with_name("gitive-hook"))
BOLD, DIM, RED, GREEN, END = "\033[1m", "\033[2m", "\033[31m", "\033[32m", "\033[0m"
if not sys.stdout.isatty():
    BOLD = DIM = RED = GREEN = END = ""


def step(text: str) -> None:
    print(f"\n{BOLD}== {text}{END}")


class Machine:
    """One simulated machine: its own $GITIVE_HOME, $HOME and clone of the team's repository."""

    def __init__(self, root: Path, name: str, remote: Path) -> None:
        self.name = name
        self.passphrase = f"{name}'s own passphrase"  # a person types it; the demo hands it over on stdin
        self.home = root / f"{name}-home"
        self.home.mkdir()
        self.clone = root / f"{name}-clone"
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
            "HOME": str(self.home), "GITIVE_HOME": str(self.home / ".gitive"),
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": name, "GIT_AUTHOR_EMAIL": f"{name}@example.com",
            "GIT_COMMITTER_NAME": name, "GIT_COMMITTER_EMAIL": f"{name}@example.com",
        }
        self.git("clone", "-q", str(remote), str(self.clone), cwd=root)

    def git(self, *args: str, cwd: Path | None = None) -> str:
        done = subprocess.run(["git", *args], cwd=cwd or self.clone, env=self.env, text=True,
                              capture_output=True, check=True)
        return done.stdout

    def gitive(self, *args: str, check: bool = True, show: bool = True, agent: bool = False,
               decide: bool = False) -> subprocess.CompletedProcess[str]:
        """Run gitive (as this machine's agent with ``agent``); ``decide``: a decision signed with the person
        key, its passphrase given on stdin."""
        if show:
            who = f"{self.name}'s agent" if agent else self.name
            print(f"{DIM}[{who}]$ gitive {' '.join(a if len(a) < 40 else a[:24] + '…' for a in args)}{END}")
        env = {**self.env, "GITIVE_AGENT": "1"} if agent else self.env
        argv, given = ([*args, "--passphrase-stdin"], self.passphrase + "\n") if decide else (list(args), None)
        done = subprocess.run([GITIVE, *argv], cwd=self.clone, env=env, text=True, capture_output=True,
                              input=given)
        if show:
            for line in (done.stdout + done.stderr).splitlines():
                print(f"    {line}")
        if check and done.returncode != 0:
            raise SystemExit(f"{RED}demo failed: gitive {args[0]} exited {done.returncode}{END}")
        return done


def at_terminal(m: Machine, *args: str) -> None:
    """Run a command that wants a person at a terminal, on a pseudo-terminal: answer its question with y and
    type the person key's passphrase when it asks."""
    print(f"{DIM}[{m.name}, at the terminal]$ gitive {' '.join(a if len(a) < 40 else a[:24] + '…' for a in args)}{END}")
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(m.clone)
        os.execve(GITIVE, [GITIVE, *args], m.env)
    out, answered, typed, deadline = b"", False, False, time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
            if not answered and b"[y/N]" in out:
                os.write(fd, b"y\n")
                answered = True
            if not typed and b"Passphrase of your person key" in out:
                os.write(fd, m.passphrase.encode() + b"\n")
                typed = True
    _, status = os.waitpid(pid, 0)
    for line in out.decode("utf-8", "replace").replace("\r", "").splitlines():
        if line.strip():
            print(f"    {line}")
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{RED}demo failed: gitive {args[0]} at the terminal{END}")


def hook(m: Machine, event: str, payload: dict) -> str:
    """What a harness does: pipe its hook payload to gitive-hook and read the reply."""
    payload = {"session_id": f"{m.name}-session", "cwd": str(m.clone), "transcript_path": "/dev/null", **payload}
    done = subprocess.run([HOOK, "claude", event], input=json.dumps(payload), env=m.env, text=True,
                          capture_output=True, cwd=m.clone)
    reply = json.loads(done.stdout or "{}")
    return (reply.get("hookSpecificOutput") or {}).get("additionalContext", "")


def show_context(text: str) -> None:
    for line in (text or "(no-opinion reply: nothing to add)").splitlines():
        print(f"    {BOLD}│{END} {line}")


def claim(holds: bool, what: str) -> None:
    """A headline claim of the demo: said when it holds, and the demo fails (exit 1) when it does not."""
    if not holds:
        raise SystemExit(f"{RED}demo failed: {what} did not happen{END}")
    print(f"    {GREEN}✓ {what}{END}")


def memory_and_mail(alice: Machine, bob: Machine, carol: Machine) -> None:
    step("Alice's agent learns something and proposes a lesson (it cannot approve it)")
    hook(alice, "session-start", {"hook_event_name": "SessionStart", "source": "startup"})
    (alice.clone / "payments").mkdir()
    (alice.clone / "payments" / "client.py").write_text("RETRIES = 3  # the sandbox drops about 1 in 20 calls\n")
    alice.git("add", ".")
    alice.git("commit", "-q", "-m", "payments: retry sandbox calls, the sandbox drops about 1 in 20 calls")
    alice.git("push", "-q", "origin", "HEAD:refs/heads/main")
    lesson = alice.gitive("lessons", "propose", "--kind", "Gotcha", "--text",
                          "The payments sandbox drops about 1 in 20 calls: keep RETRIES at 3 or the "
                          "integration tests flake.", "--applicability", "editing payments/ or its tests",
                          "-e", "file:payments/client.py", "-e", "commit:HEAD", "--session", "alice/alice-clone-claude",
                          show=True).stdout.strip()
    step("Alice (the project's owner) confirms Bob as a project member; Bob reviews the lesson at his terminal")
    at_terminal(alice, "project", "confirm", "bob")
    alice.gitive("sync", show=False)
    bob.git("pull", "-q", "origin", "main")
    bob.gitive("sync", show=False)
    at_terminal(bob, "review", "approve", lesson[:12], "--note", "seen it in CI twice this week")
    bob.gitive("sync", show=False)

    step("Carol's agent starts a session: its first context holds the verified lesson, framed")
    carol.git("pull", "-q", "origin", "main")
    carol.gitive("sync", show=False)
    card = hook(carol, "session-start", {"hook_event_name": "SessionStart", "source": "startup"})
    show_context(card)
    claim(f'<team-memory id="{lesson[:16]}"' in card and "verified>" in card,
          "the session card carried the verified lesson")

    step("Alice runs her daemon; Carol writes to Alice's live session")
    alice.gitive("daemon", "start", "--interval", "1")
    hook(alice, "session-start", {"hook_event_name": "SessionStart", "source": "startup"})
    deadline = time.monotonic() + 40  # the daemon publishes presence (at most every 15 s), then pushes it
    while time.monotonic() < deadline:
        carol.gitive("sync", show=False)
        listed = json.loads(carol.gitive("who", "--json", show=False).stdout or "[]")
        if any(r["address"] == "alice/alice-clone-claude" for r in listed):
            break
        time.sleep(1)
    carol.gitive("who")
    sent = json.loads(carol.gitive("send", "alice/alice-clone-claude",
                                   "Are you touching payments/client.py? I am about to.",
                                   "--from", "carol/carol-clone-claude", "--json").stdout)["id"]
    step("Alice's agent finishes a tool call: the message arrives, framed, exactly once")
    edit = {"hook_event_name": "PostToolUse", "tool_name": "Read", "tool_use_id": "t-1",
            "tool_input": {"file_path": str(alice.clone / "README")}}
    deadline, seen = time.monotonic() + 20, ""
    while time.monotonic() < deadline and not seen:
        time.sleep(0.5)
        seen = hook(alice, "post-tool", edit)
    show_context(seen)
    again = hook(alice, "post-tool", edit | {"tool_use_id": "t-2"})
    show_context(again)
    claim(seen.count(f'id="{sent}"') == 1 and f'id="{sent}"' not in again,
          "Carol's message arrived at Alice's next tool call, exactly once")
    alice.gitive("daemon", "stop")

    step("Alice retracts the lesson; after one sync each it is gone from every machine")
    at_terminal(alice, "retract", lesson[:12], "--reason", "the sandbox was fixed")
    for m in (alice, bob, carol):
        m.gitive("sync", show=False)
    carol.gitive("lessons", "show", lesson[:12])


def future_tense(root: Path, remote: Path, alice: Machine, bob: Machine) -> None:
    step("Alice (an admin) invites an anchor; an always-on box joins with that code and takes a first look")
    code = alice.gitive("invite", "--anchor", show=True, decide=True).stdout.strip()
    box = Machine(root, "box", remote)
    box.gitive("join", code, "--machine", "box")
    box.gitive("anchor", "run", "--once", show=False)  # its baseline: the branches and logs as they are now

    step("Alice pushes the auth-rotation branch; Bob's agent owes a follow-up once it is merged")
    alice.git("checkout", "-q", "-b", "auth-rotation")
    (alice.clone / "auth.py").write_text("GRACE_PERIOD_S = 300  # old tokens accepted while clients rotate\n")
    alice.git("add", "auth.py")
    alice.git("commit", "-q", "-m", "auth: rotate signing keys, accept old tokens for a grace period")
    alice.git("push", "-q", "origin", "auth-rotation")
    alice.git("checkout", "-q", "main")
    bob.gitive("sync", show=False)
    bob.gitive("owe", "--when", 'e.event.action == "vcs.merged" && e.branch == "auth-rotation"',
               "--do", "remove the grace period", agent=True, check=False)
    bob.gitive("owe", "--when", 'e.event.action == "vcs.merged" && e.vcs.branch == "auth-rotation"',
               "--do", "remove the grace period", "--to", "alice", "--file", "auth.py", agent=True)
    bob.gitive("owed")

    step("The anchor is down; Alice merges auth-rotation on the remote (as a git host would) and deletes it")
    alice.git("merge", "-q", "--no-ff", "-m", "Merge branch 'auth-rotation'", "auth-rotation")
    alice.git("push", "-q", "origin", "HEAD:refs/heads/main", ":auth-rotation")

    step("The anchor starts after the merge: it replays from its cursors and fires the obligation, late")
    box.gitive("anchor", "run", "--once")
    box.gitive("anchor", "status")
    bob.gitive("sync", show=False)
    bob.gitive("owed")


def forge(mallory: Machine, victim_id: str) -> None:
    """Mallory writes two forgeries with the library, as an attacker with write access to the remote could."""
    code = f"""
import pygit2, sys
from gitive.core.keys import load_or_create_key, machine_id
from gitive.store import logs, refs
repo = pygit2.Repository({str(mallory.clone)!r})
team = repo.config["hive.team"]
key, _ = load_or_create_key()
record = {{"type": "invite", "id": "f" * 64, "key": machine_id(key), "reusable": True, "expires": 2**40}}
# 1. an entry in Mallory's own log: well signed, but Mallory is not on the roster
logs.append(repo, key, team, "roster", {{"team": True}}, record)
# 2. an entry placed in Alice's log, pretending to be hers, signed by Mallory's key
victim = {victim_id!r}
tip = refs.tip(repo, "refs/hive-remotes/origin/logs/" + victim + "/roster")
prev = logs.read_entry(repo, tip)
fake = dict(record, id="e" * 64)
entry = {{"v": 2, "author": victim, "log": "roster", "scope": {{"team": True}}, "seq": prev.seq + 1,
          "at": prev.body["at"] + 1, "prev": prev.hash, "record": fake}}
from gitive.core import canonical, signed
env = signed.sign(key, team, "invite", entry)
env["by"] = victim  # claim Alice signed it
commit = logs.write_commit(repo, canonical.dumps(env), entry, tip)
refs.force_set(repo, "refs/forged", commit, "forge")
print(machine_id(key))
"""
    subprocess.run([sys.executable, "-c", code], env=mallory.env, check=True, capture_output=True, text=True)
    mallory.git("push", "-q", "origin", "refs/hive/logs/*:refs/hive/logs/*")
    mallory.git("push", "-q", "-f", "origin", f"refs/forged:refs/hive/logs/{victim_id}/roster")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="gitive's demo: three machines and one bare remote.")
    parser.add_argument("--load", action="store_true", help="Run under 2 busy processes per core.")
    args = parser.parse_args(argv)
    with _load(args.load) as load:
        if load:
            print(f"{DIM}under load: {load.count} busy processes ({load.count // max(1, os.cpu_count() or 1)} "
                  f"per core){END}")
        return demo()


@contextlib.contextmanager
def _load(wanted: bool) -> Any:
    if not wanted:
        yield None
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the repository's testing/ package
    from testing.load import cpu_load

    with cpu_load(per_core=2, seconds=1800) as load:
        yield load


def demo() -> int:
    started = time.monotonic()
    root = Path(tempfile.mkdtemp(prefix="gitive-demo-"))
    try:
        remote = root / "team.git"
        subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
        step("Alice founds a team in her clone of the team's repository")
        alice = Machine(root, "alice", remote)
        alice.git("commit", "-q", "--allow-empty", "-m", "first commit")
        alice.git("push", "-q", "origin", "HEAD:refs/heads/main")
        alice.gitive("init", "--person", "alice", "--machine", "laptop", "--name", "acme", decide=True)
        alice.gitive("sync")

        step("Alice makes two one-time invites, sends them privately, and goes offline")
        code_bob = alice.gitive("invite", show=False, decide=True).stdout.strip()
        code_carol = alice.gitive("invite", "--days", "1", show=False, decide=True).stdout.strip()
        print(f"    invite for Bob:   {code_bob[:30]}…\n    invite for Carol: {code_carol[:30]}…")

        step("Bob and Carol clone the repository and join with their codes")
        bob = Machine(root, "bob", remote)
        bob.gitive("join", code_bob, "--person", "bob", "--machine", "desk", decide=True)
        carol = Machine(root, "carol", remote)
        carol.gitive("join", code_carol, "--person", "carol", "--machine", "tower", decide=True)
        step("Reusing Bob's one-time code is refused")
        mallory = Machine(root, "mallory", remote)
        mallory.gitive("join", code_bob, "--person", "mallory", check=False, decide=True)

        step("Everyone syncs and lists the roster")
        for m in (alice, bob, carol):
            m.gitive("sync", show=False)
        for m in (alice, bob, carol):
            m.gitive("team")

        memory_and_mail(alice, bob, carol)
        future_tense(root, remote, alice, bob)

        roster_before = json.loads(bob.gitive("team", "--json", show=False).stdout)["members"]
        step("Mallory (not a member) pushes forged entries straight to the remote")
        alice_id = alice.gitive("team", "--json", show=False).stdout
        alice_machine = next(x["machine"] for x in json.loads(alice_id)["members"] if x["person"] == "alice")
        mallory.git("config", "hive.team", json.loads(alice_id)["team_id"])
        mallory.git("config", "--add", "remote.origin.fetch", "+refs/hive/*:refs/hive-remotes/origin/*")
        mallory.git("fetch", "-q", "origin")
        forge(mallory, alice_machine)
        print("    pushed: one entry under Mallory's own key, one in Alice's log signed by Mallory")

        step("Bob syncs: both forgeries are refused and reported; the roster is unchanged")
        synced = bob.gitive("sync", check=False)
        after = json.loads(bob.gitive("team", "--json", show=False).stdout)["members"]
        bob.gitive("team")
        bob.gitive("doctor", check=False)
        said = synced.stdout + synced.stderr
        claim("rejected bad-signature" in said and "rejected roster-refused" in said,
              "both forgeries were refused and reported")
        claim(sorted(m["machine"] for m in after) == sorted(m["machine"] for m in roster_before)
              and "mallory" not in {m["person"] for m in after}, "the roster is unchanged")

        elapsed = time.monotonic() - started
        print(f"\n{GREEN}demo finished in {elapsed:.1f}s; removing {root}{END}")
        return 0
    finally:
        for home in root.glob("*-home/.gitive"):  # never leave a daemon behind, even when a step failed
            subprocess.run([GITIVE, "daemon", "stop"], env={**os.environ, "GITIVE_HOME": str(home)},
                           capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
