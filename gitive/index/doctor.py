"""``gitive doctor``: every problem the index and the repositories show, each with what to do about it."""

from __future__ import annotations

import sqlite3
from typing import Any

from gitive.index import queries, store_doctor
from gitive.index.entries import check_signatures
from gitive.store import repo as repos
from gitive.store import sync
from gitive.team.hive import Hive

_HINTS = {
    "equivocation": "a machine signed two different entries for one seq: its key may be copied or stolen; "
                    "remove it (`gitive team remove`) and investigate",
    "rollback": "a source served a shorter log than before (force-push or lost data); what was verified is kept",
    "bad-signature": "an entry does not verify: forged or corrupted; it is ignored",
    "wrong-signer": "an entry signed by another machine sits in this machine's log: forged; it is ignored",
    "seq-gap": "a log skips or repeats a sequence number; entries after the gap are ignored",
    "malformed": "a commit in a hive log is not a well-formed entry; that log is ignored from there",
    "wrong-log": "an entry names a different log than the ref it sits in; it is ignored",
    "future": "an entry is stamped more than a day ahead of this clock; it is used once that time comes",
    "roster-refused": "a roster entry broke a membership rule and is ignored",
    "bad-link": "an entry's prev does not name the entry below it: forged or re-wrapped; that log is ignored "
                "from there",
    "unknown-signer": "a log of a machine the roster does not admit; it is not read until the roster admits it",
    "inner-signature": "an entry's own signature fails although the entry above it vouches for its bytes: its "
                       "machine wrote something no honest gitive writes; check that machine",
    "replay": "a person's signed decision was appended again by their machine (someone or some agent holding its "
              "machine key, not their passphrase); the copy counts nowhere; check what runs on that machine",
    "replaced": "someone pushed commits onto this machine's own log on the remote; `gitive sync` replaced them "
                "with this machine's verified tip; check who can push to that remote",
}


def _problem(kind: str, where: str, detail: str, hint: str) -> dict[str, Any]:
    return {"kind": kind, "where": where, "seq": None, "detail": detail, "hint": hint}


def remote_plans(hive: Hive) -> list[dict[str, Any]]:
    """Per shared store, the remotes ``sync`` uses and leaves out (the very decision sync makes)."""
    out = []
    for repo in hive.shared_stores():
        plan = sync.plan_remotes(repo)
        out.append({"store": repo.path, "remotes": plan.chosen, "explicit": plan.explicit, "skipped": plan.skipped,
                    "without_refspec": plan.without_refspec, "unknown": plan.unknown,
                    "last_sync": sync.last_results(repo)})
    return out


def remote_problems(repo: Any) -> list[dict[str, Any]]:
    """What keeps ``sync`` in ``repo`` from reaching the team: no remote, remotes it leaves out, names that
    are not remotes, and what the last sync saw (a remote that refused pushes or could not be reached)."""
    plan, names = sync.plan_remotes(repo), repos.remotes(repo)
    found = []
    if not names:
        found.append(_problem("no-remote", repo.path, "this repository has no remote: what gitive writes here "
                              "reaches nobody", "add one (`git remote add origin URL`), then `gitive sync`"))
    for remote in plan.unknown:
        found.append(_problem("unknown-remote", f"{repo.path}:{remote}", f"hive.remote names {remote!r}, which "
                              "is not a remote of this repository", f"run `git config --unset hive.remote "
                              f"'^{remote}$'` or add the remote"))
    for remote in plan.skipped:
        found.append(_problem("remote-skipped", f"{repo.path}:{remote}", f"remote {remote!r} carries hive refs "
                              "but hive.remote leaves it out, so sync does not use it",
                              f"run `git config --add hive.remote {remote}`, or `git config --unset-all "
                              "hive.remote` to sync with every hive remote"))
    for remote in names:
        if sync.missing_refspec(repo, remote):
            used = "sync names it in hive.remote" if remote in plan.chosen else "so sync does not use it"
            found.append(_problem("missing-refspec", f"{repo.path}:{remote}",
                                  f"remote {remote!r} does not fetch refs/hive/* ({used})",
                                  f"run `git config --add remote.{remote}.fetch '{sync.fetch_refspec(remote)}'`"))
    last = sync.last_results(repo)
    for remote in plan.chosen:
        seen = last.get(remote) or {}
        if seen.get("rejected"):
            refused = "; ".join(f"{ref}: {why}" for ref, why in seen["rejected"][:3])
            found.append(_problem("push-refused", f"{repo.path}:{remote}", f"the last sync's push to {remote!r} "
                                  f"was refused for {len(seen['rejected'])} ref(s): {refused}",
                                  "the remote rejects hive refs (a protected namespace, a server hook, or no "
                                  "write access): fix that on the host, then `gitive sync`"))
        if seen.get("unreachable"):
            found.append(_problem("remote-unreachable", f"{repo.path}:{remote}", seen["unreachable"],
                                  "remove the lock it names if no git process is running, then `gitive sync`"
                                  if ".lock" in str(seen["unreachable"]) else
                                  "check the URL and your access, then `gitive sync`"))
    return found


def diagnose(hive: Hive, conn: sqlite3.Connection) -> list[dict[str, Any]]:
    # Entries authenticated by a hash link only: check their own signatures now (an idle sync does a few).
    # A read-only view of the index (`gitive ui`) reports what earlier checks found.
    try:
        conn.execute("BEGIN IMMEDIATE")
        check_signatures(conn, hive.team_id, hive.stores())
        conn.execute("COMMIT")
    except sqlite3.OperationalError:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
    found: list[dict[str, Any]] = []
    for p in queries.problems(conn):
        found.append({"kind": p["kind"], "where": p["source"], "seq": p["seq"], "detail": p["detail"],
                      "hint": _HINTS.get(p["kind"], "")})
    for u in queries.unknown_signers(conn):
        found.append({"kind": "unknown-signer", "where": u["author"][:16], "seq": None,
                      "detail": f"{u['entries']} entries by a machine the roster does not admit",
                      "hint": "they are ignored until the roster admits that machine"})
    for repo in hive.shared_stores():
        found += remote_problems(repo)
    return found + store_doctor.body_problems(hive, conn) + store_doctor.upkeep_problems(hive)
