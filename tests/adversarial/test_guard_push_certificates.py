"""The server guard's anchor option against anyone holding push access but not the anchor's key: a person, or an
agent with a shell on a person's machine. The draft the anchor pushed to ``hive/`` is the attacker's to fetch;
it tries to bring it to main, a new branch and a tag with every client-side trick, re-authored as alice, and
with a push certificate signed by its own key. The check is in the remote's pre-receive, so nothing on the
client helps; only a certificate the anchor's key signed for that very push lands a draft, and the anchor's own
landing (an owner's signed approval) does."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

from gitive.store import pushcert
from testing import prepared as prep
from testing.anchor import AnchoredTeam

TARGETS = ("refs/heads/main", "refs/heads/sneaky", "refs/tags/v1")


def _push(machine: Any, *args: str, env: dict[str, str] | None = None) -> bool:
    """Whether ``git <args>`` in ``machine``'s clone succeeded; a refusal must be the guard's own."""
    done = subprocess.run(["git", *args], cwd=machine.clone, capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0 or "gitive guard" in done.stderr, done.stderr
    return done.returncode == 0


def _attacks(team: AnchoredTeam, draft: str, tmp: Path) -> dict[str, bool]:
    alice = team.alice
    alice.git("fetch", "--quiet", "origin", f"+{draft}:refs/remotes/origin/the-draft")
    alice.git("checkout", "--quiet", "-B", "reauthored", "refs/remotes/origin/the-draft")
    alice.git("-c", "user.name=Alice", "-c", "user.email=alice@example.com", "commit", "--quiet", "--amend",
              "--no-edit", "--reset-author", "--no-verify")
    no_count = {k: v for k, v in os.environ.items() if k != "GIT_CONFIG_COUNT"}
    out: dict[str, bool] = {}
    with pushcert.signing_config(alice.key, tmp) as own:
        for target in TARGETS:
            name = target.rsplit("/", 1)[-1]
            for what, src in (("draft", "refs/remotes/origin/the-draft"), ("reauthored", "reauthored")):
                spec = f"{src}:{target}"
                out[f"{what}-{name}-plain"] = _push(alice, "push", "origin", spec)
                out[f"{what}-{name}-no-verify"] = _push(alice, "push", "--no-verify", "origin", spec)
                out[f"{what}-{name}-hookspath"] = _push(alice, "-c", "core.hooksPath=/dev/null", "push", "origin",
                                                        spec)
                out[f"{what}-{name}-env-u"] = _push(alice, "push", "origin", spec, env=no_count)
                out[f"{what}-{name}-signed-by-alice"] = _push(alice, *own, "push", "--signed", "origin", spec)
            merged = f"merge-{name}"
            alice.git("checkout", "--quiet", "-B", merged, "origin/main")
            alice.git("merge", "--quiet", "--no-ff", "--no-edit", "refs/remotes/origin/the-draft")
            out[f"merge-commit-{name}"] = _push(alice, "push", "origin", f"{merged}:{target}")
    return out


def test_no_push_but_the_anchors_signed_landing_brings_a_draft_outside_hive(team: AnchoredTeam,
                                                                            tmp_path: Path) -> None:
    team.alice.ok("server", "install-hook", str(team.remote), "--team", team.alice.team_id, "--anchor",
                  team.anchor.id)
    base = prep.buggy_project(team.alice)  # a person's own commits still land as ever
    task = prep.hand(team.alice)
    tick = prep.ticker(team)
    tick()
    draft = prep.prepared_records(team.anchor)[-1]
    assert draft["state"] == "drafted", draft
    tries = _attacks(team, draft["branch"], tmp_path)
    print("\n".join(f"{name}\t{'accepted' if ok else 'refused'}" for name, ok in tries.items()))
    assert len(tries) == 33 and not any(tries.values()), [k for k, v in tries.items() if v]
    assert prep.remote_tip(team, "refs/heads/main") == base
    assert prep.remote_tip(team, "refs/heads/sneaky") is None and prep.remote_tip(team, "refs/tags/v1") is None
    # the owner approves: the anchor lands it with its own signed certificate
    team.alice.decided("review", "prepared", task["id"][:12], "--approve", "--json")
    tick()
    landed = prep.prepared_records(team.anchor)[-1]
    assert landed["state"] == "landed", landed
    assert prep.remote_tip(team, "refs/heads/main") == draft["head"]


def test_the_machine_key_is_what_the_guard_trusts(team: AnchoredTeam, tmp_path: Path) -> None:
    """The boundary, shown: whoever holds the anchor's ``machine.key`` (root on the anchor's host; never its
    sandboxed worker) can sign a landing. That is why the key is the one thing the sandbox hides first."""
    team.alice.ok("server", "install-hook", str(team.remote), "--team", team.alice.team_id, "--anchor",
                  team.anchor.id)
    prep.buggy_project(team.alice)
    prep.hand(team.alice)
    prep.ticker(team)()
    draft = prep.prepared_records(team.anchor)[-1]
    team.alice.git("fetch", "--quiet", "origin", f"+{draft['branch']}:refs/remotes/origin/the-draft")
    with pushcert.signing_config(team.anchor.key, tmp_path) as stolen:
        assert _push(team.alice, *stolen, "push", "--signed", "origin", "refs/remotes/origin/the-draft:main")


def test_a_guard_installed_before_signed_pushes_says_to_reinstall_and_then_lands(team: AnchoredTeam) -> None:
    """The upgrade: a remote whose anchor option predates certificates (no nonce seed, no allowed signers) refuses
    the anchor's landing with the fix in the message; installing again (idempotent) lets it land."""
    team.alice.ok("server", "install-hook", str(team.remote), "--team", team.alice.team_id, "--anchor",
                  team.anchor.id)
    for key in ("receive.certNonceSeed", "gpg.ssh.allowedSignersFile"):
        subprocess.run(["git", "config", "--unset", key], cwd=team.remote, check=True)
    prep.buggy_project(team.alice)
    task = prep.hand(team.alice)
    tick = prep.ticker(team)
    tick()
    draft = prep.prepared_records(team.anchor)[-1]
    team.alice.decided("review", "prepared", task["id"][:12], "--approve", "--json")
    report = tick()
    assert prep.prepared_records(team.anchor)[-1]["state"] == "drafted"
    assert "install-hook" in str(report.problems), report.problems
    team.alice.ok("server", "install-hook", str(team.remote), "--anchor", team.anchor.id)
    tick()
    assert prep.prepared_records(team.anchor)[-1]["state"] == "landed"
    assert prep.remote_tip(team, "refs/heads/main") == draft["head"]
