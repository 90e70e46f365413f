"""verify_chain: the structural half of the read-union (seq, signer, signature, shape)."""

from __future__ import annotations

from typing import Any

import pygit2
import pytest

from gitive.constants import ENTRY_FILE
from gitive.core import canonical, signed
from gitive.store import logs, refs, verify
from testing.builders import OTHER_TEAM_ID, TEAM_ID, TEAM_SCOPE, Machine, entry_body, machine

A = machine("machine-a")
B = machine("machine-b")
REF_A = refs.log_ref(A.id, "team")
REF_B = refs.log_ref(B.id, "team")
AT = 1_700_000_000_000


def record(name: str, who: Machine = A) -> dict[str, Any]:
    return {"type": "team", "name": name, "founder": who.id}


def append(repo: pygit2.Repository, name: str, who: Machine = A, team_id: str = TEAM_ID) -> logs.Entry:
    return logs.append(repo, who.key, team_id, "team", TEAM_SCOPE, record(name, who), at=AT)


def write(repo: pygit2.Repository, seq: int, parent: str | None, *, who: Machine = A, signer: Machine | None = None,
          log: str = "team", team_id: str = TEAM_ID, tamper: dict[str, Any] | None = None) -> str:
    """Build an entry commit by hand (no ref moves), optionally signed by someone else or tampered after."""
    body = entry_body(who, record(f"n{seq}", who), seq=seq, at=AT + seq, log=log)
    env = signed.sign((signer or who).key, team_id, "team", body)
    if tamper:
        env = {**env, "body": {**body, **tamper}}
    return logs.write_commit(repo, canonical.dumps(env), env["body"], parent)


def junk_commit(repo: pygit2.Repository, parent: str | None = None) -> str:
    builder = repo.TreeBuilder()
    builder.insert(ENTRY_FILE, repo.create_blob(b"not an entry"), pygit2.enums.FileMode.BLOB)
    who = pygit2.Signature("x", "x@hive", 0, 0)
    return str(repo.create_commit(None, who, who, "junk\n", builder.write(), [pygit2.Oid(hex=parent)] if parent else []))


def run(repo: pygit2.Repository, tip: str, *, ref: str = REF_A, owner: Machine = A, log: str = "team",
        known: dict[str, int] | None = None, team_id: str = TEAM_ID) -> tuple[verify.Verified, int | None]:
    return verify.verify_chain(repo, team_id, ref, owner.id, log, tip, (known or {}).get)


def test_an_honest_chain_verifies(bare_repo: pygit2.Repository) -> None:
    made = [append(bare_repo, f"n{i}") for i in range(3)]
    result, base = run(bare_repo, made[-1].commit)
    assert result.problem is None
    assert base is None
    assert [e.commit for e in result.entries] == [e.commit for e in made]
    assert [e.seq for e in result.entries] == [1, 2, 3]


def test_an_entry_signed_for_another_team_is_a_bad_signature(bare_repo: pygit2.Repository) -> None:
    append(bare_repo, "n1")
    append(bare_repo, "n2")
    forged = append(bare_repo, "n3", team_id=OTHER_TEAM_ID)
    result, _ = run(bare_repo, forged.commit)
    assert [e.seq for e in result.entries] == [1, 2]
    assert result.problem is not None
    assert result.problem.kind == "bad-signature"
    assert (result.problem.commit, result.problem.seq, result.problem.ref) == (forged.commit, 3, REF_A)
    # Read as the other team, seq 3 is authentic and vouches for 1 and 2 through their hashes; their own
    # signatures (for this team) were not checked, and are left to the background check.
    other, _ = run(bare_repo, forged.commit, team_id=OTHER_TEAM_ID)
    assert other.problem is None and other.signature_checked == (False, False, True)
    assert not any(verify.signature_ok(OTHER_TEAM_ID, e) for e in other.entries[:2])


def test_a_body_changed_after_signing_is_a_bad_signature(bare_repo: pygit2.Repository) -> None:
    first = write(bare_repo, 1, None)
    tampered = write(bare_repo, 2, first, tamper={"at": AT + 999})
    result, _ = run(bare_repo, tampered)
    assert [e.seq for e in result.entries] == [1]
    assert result.problem.kind == "bad-signature" and result.problem.commit == tampered


def test_another_machines_commit_under_my_ref_is_wrong_signer(bare_repo: pygit2.Repository) -> None:
    mine = append(bare_repo, "a1", A)
    theirs = append(bare_repo, "b1", B)
    bare_repo.references.create(REF_A, theirs.commit, force=True)  # B's entry placed under A's name
    result, _ = run(bare_repo, theirs.commit)
    assert result.entries == []
    assert result.problem.kind == "wrong-signer"
    assert result.problem.commit == theirs.commit
    assert B.id[:12] in result.problem.detail and A.id[:12] in result.problem.detail
    assert run(bare_repo, mine.commit)[0].problem is None
    assert run(bare_repo, theirs.commit, ref=REF_B, owner=B)[0].problem is None


@pytest.mark.parametrize(
    ("who", "signer"), [(B, B), (A, B), (B, A)], ids=["author-and-signer-b", "signed-by-b", "author-b"]
)
def test_author_and_signer_must_both_be_the_owner(bare_repo: pygit2.Repository, who: Machine,
                                                   signer: Machine) -> None:
    first = write(bare_repo, 1, None)
    odd = write(bare_repo, 2, first, who=who, signer=signer)
    result, _ = run(bare_repo, odd)
    assert [e.seq for e in result.entries] == [1]
    assert result.problem.kind == "wrong-signer"


def test_a_skipped_seq_is_a_seq_gap(bare_repo: pygit2.Repository) -> None:
    one = write(bare_repo, 1, None)
    three = write(bare_repo, 3, one)
    four = write(bare_repo, 4, three)
    result, _ = run(bare_repo, four)
    assert [e.seq for e in result.entries] == [1]
    assert result.problem.kind == "seq-gap"
    assert (result.problem.commit, result.problem.seq) == (three, 3)
    assert "expected" in result.problem.detail


@pytest.mark.parametrize("seqs", [(2,), (1, 1), (1, 2, 2), (1, 3, 2)])
def test_seq_must_count_up_from_one(bare_repo: pygit2.Repository, seqs: tuple[int, ...]) -> None:
    tip = None
    for seq in seqs:
        tip = write(bare_repo, seq, tip)
    result, _ = run(bare_repo, tip)
    assert result.problem is not None and result.problem.kind == "seq-gap"


def test_an_entry_of_another_log_is_wrong_log(bare_repo: pygit2.Repository) -> None:
    one = write(bare_repo, 1, None)
    other = write(bare_repo, 2, one, log="mail")
    result, _ = run(bare_repo, other)
    assert [e.seq for e in result.entries] == [1]
    assert result.problem.kind == "wrong-log"


def test_a_malformed_commit_keeps_what_lies_below_it_and_nothing_above(bare_repo: pygit2.Repository) -> None:
    one = write(bare_repo, 1, None)
    junk = junk_commit(bare_repo, one)
    three = write(bare_repo, 3, junk)
    result, base = run(bare_repo, three)
    assert [e.commit for e in result.entries] == [one]  # every reader agrees on the verified prefix
    assert result.problem.kind == "malformed"
    assert result.problem.commit == junk
    assert base is None


def test_known_stops_the_walk_at_a_verified_commit(bare_repo: pygit2.Repository) -> None:
    first = [append(bare_repo, f"n{i}") for i in range(3)]
    verified, _ = run(bare_repo, first[-1].commit)
    seen = {e.commit: e.seq for e in verified.entries}
    more = [append(bare_repo, f"m{i}") for i in range(2)]
    asked: list[str] = []

    def known(oid: str) -> int | None:
        asked.append(oid)
        return seen.get(oid)

    result, base = verify.verify_chain(bare_repo, TEAM_ID, REF_A, A.id, "team", more[-1].commit, known)
    assert result.problem is None
    assert base == 3
    assert [e.commit for e in result.entries] == [e.commit for e in more]
    assert [e.seq for e in result.entries] == [4, 5]
    assert asked == [more[1].commit, more[0].commit, first[2].commit]  # stopped at the known commit


def test_known_tip_means_nothing_new(bare_repo: pygit2.Repository) -> None:
    tip = append(bare_repo, "n1").commit
    result, base = run(bare_repo, tip, known={tip: 1})
    assert result == verify.Verified([], None)
    assert base == 1


def test_known_commit_hides_what_is_below_it(bare_repo: pygit2.Repository) -> None:
    junk = junk_commit(bare_repo)
    two = write(bare_repo, 2, junk)
    three = write(bare_repo, 3, two)
    assert run(bare_repo, three)[0].problem.kind == "malformed"
    result, base = run(bare_repo, three, known={two: 2})
    assert result.problem is None and base == 2
    assert [e.seq for e in result.entries] == [3]


def test_seq_continues_from_the_known_base(bare_repo: pygit2.Repository) -> None:
    one = write(bare_repo, 1, None)
    two = write(bare_repo, 2, one)
    result, _ = run(bare_repo, two, known={one: 4})  # the reader believes the base was seq 4
    assert result.problem.kind == "seq-gap" and result.problem.seq == 2


def test_check_entry_without_expected_seq_skips_the_seq_check(bare_repo: pygit2.Repository) -> None:
    entry = logs.read_entry(bare_repo, write(bare_repo, 7, None))
    assert verify.check_entry(TEAM_ID, A.id, "team", entry, None) is None
    assert verify.check_entry(TEAM_ID, A.id, "team", entry, 1).kind == "seq-gap"
    assert verify.check_entry(TEAM_ID, B.id, "team", entry, None).kind == "wrong-signer"
    assert verify.check_entry(OTHER_TEAM_ID, A.id, "team", entry, None).kind == "bad-signature"


def test_check_entry_verifies_entries_built_in_memory() -> None:
    env = signed.sign(A.key, TEAM_ID, "team", entry_body(A, record("x"), log="team"))
    entry = logs.Entry("0" * 40, None, env)  # no raw bytes: the signature is checked over canonical(body)
    assert verify.check_entry(TEAM_ID, A.id, "team", entry, 1) is None
    forged = logs.Entry("0" * 40, None, {**env, "body": {**env["body"], "at": 5}})
    assert verify.check_entry(TEAM_ID, A.id, "team", forged, 1).kind == "bad-signature"


def test_an_entry_stamped_more_than_a_day_ahead_is_refused_until_then(
    bare_repo: pygit2.Repository, monkeypatch: pytest.MonkeyPatch
) -> None:
    day = 86_400_000
    monkeypatch.setenv("GITIVE_NOW_MS", str(AT))
    first = logs.append(bare_repo, A.key, TEAM_ID, "team", TEAM_SCOPE, record("now"), at=AT)
    edge = logs.append(bare_repo, A.key, TEAM_ID, "team", TEAM_SCOPE, record("edge"), at=AT + day)
    ahead = logs.append(bare_repo, A.key, TEAM_ID, "team", TEAM_SCOPE, record("ahead"), at=AT + day + 1)
    result, _ = run(bare_repo, ahead.commit)
    assert [e.commit for e in result.entries] == [first.commit, edge.commit]
    assert result.problem.kind == "future" and result.problem.seq == 3
    monkeypatch.setenv("GITIVE_NOW_MS", str(AT + 1))
    result, _ = run(bare_repo, ahead.commit)
    assert result.problem is None and len(result.entries) == 3
