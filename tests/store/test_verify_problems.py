"""What a refusal says: check_entry and authenticate name the ref, commit, seq and reason they were given,
check the link to the entry below and the reader's clock, as verify_chain does (mutation testing found these
unasserted)."""

from __future__ import annotations

import pygit2

from gitive.store import logs, verify
from testing.builders import OTHER_TEAM_ID, TEAM_ID, TEAM_SCOPE, machine

A = machine("machine-a")
AT = 1_700_000_000_000
DAY = 86_400_000
REF = "refs/hive/logs/x/team"


def _entries(repo: pygit2.Repository, n: int) -> list[logs.Entry]:
    return [logs.append(repo, A.key, TEAM_ID, "team", TEAM_SCOPE, {"type": "team", "name": f"n{i}", "founder": A.id},
                        at=AT + i) for i in range(n)]


def test_check_entry_names_the_ref_commit_seq_and_reason_of_a_bad_signature(bare_repo: pygit2.Repository) -> None:
    first, second = _entries(bare_repo, 2)
    problem = verify.check_entry(OTHER_TEAM_ID, A.id, "team", second, 2, REF, AT, first)
    assert problem == verify.Problem("bad-signature", REF, second.commit, 2, "signature does not verify")
    assert verify.check_entry(OTHER_TEAM_ID, A.id, "team", second, 2).ref == ""  # no ref given: none named


def test_check_entry_names_its_ref_on_a_link_problem(bare_repo: pygit2.Repository) -> None:
    (entry,) = _entries(bare_repo, 1)
    problem = verify.check_entry(TEAM_ID, A.id, "team", entry, 2, REF)
    assert (problem.kind, problem.ref, problem.commit, problem.seq) == ("seq-gap", REF, entry.commit, 1)


def test_check_entry_checks_the_link_to_the_entry_below(bare_repo: pygit2.Repository) -> None:
    first, second, third = _entries(bare_repo, 3)
    assert verify.check_entry(TEAM_ID, A.id, "team", third, 3, REF, below=second) is None
    problem = verify.check_entry(TEAM_ID, A.id, "team", third, 3, REF, below=first)  # prev names second
    assert (problem.kind, problem.ref) == ("bad-link", REF)


def test_check_entry_uses_the_readers_clock(bare_repo: pygit2.Repository) -> None:
    (entry,) = _entries(bare_repo, 1)
    assert verify.check_entry(TEAM_ID, A.id, "team", entry, 1, REF, AT) is None
    problem = verify.check_entry(TEAM_ID, A.id, "team", entry, 1, REF, AT - 2 * DAY)
    assert (problem.kind, problem.ref, problem.retry_at) == ("future", REF, AT - DAY)


def test_authenticate_names_the_lowest_forgery(bare_repo: pygit2.Repository) -> None:
    chain = _entries(bare_repo, 2)
    good, checked, problem = verify.authenticate(OTHER_TEAM_ID, chain)
    assert (good, checked) == (0, [])
    assert problem == verify.Problem("bad-signature", "", chain[0].commit, 1, "signature does not verify")
    assert verify.authenticate(TEAM_ID, chain, REF) == (2, [False, True], None)


def test_a_walk_stopped_at_a_refused_tip_checked_no_signature(bare_repo: pygit2.Repository) -> None:
    (entry,) = _entries(bare_repo, 1)
    result, base = verify.verify_chain(bare_repo, TEAM_ID, REF, A.id, "team", entry.commit, {}.get,
                                       refused=entry.commit)
    assert result == verify.Verified([], None, (), True) and result.signature_checked == ()
    assert base is None


def test_verify_chain_uses_the_readers_clock_it_is_given(bare_repo: pygit2.Repository) -> None:
    first, second = _entries(bare_repo, 2)
    early, _ = verify.verify_chain(bare_repo, TEAM_ID, REF, A.id, "team", second.commit, {}.get, now=AT - 2 * DAY)
    assert early.entries == [] and (early.problem.kind, early.problem.ref, early.problem.seq) == ("future", REF, 1)
    on_time, _ = verify.verify_chain(bare_repo, TEAM_ID, REF, A.id, "team", second.commit, {}.get, now=AT)
    assert on_time.problem is None and [e.commit for e in on_time.entries] == [first.commit, second.commit]


def test_a_malformed_tip_is_named_with_its_ref_and_reason(bare_repo: pygit2.Repository) -> None:
    (entry,) = _entries(bare_repo, 1)
    builder = bare_repo.TreeBuilder()
    builder.insert("entry.json", bare_repo.create_blob(b"not an entry"), pygit2.enums.FileMode.BLOB)
    who = pygit2.Signature("x", "x@hive", 0, 0)
    junk = str(bare_repo.create_commit(None, who, who, "junk\n", builder.write(), [pygit2.Oid(hex=entry.commit)]))
    result, _ = verify.verify_chain(bare_repo, TEAM_ID, REF, A.id, "team", junk, {}.get, now=AT)
    assert [e.commit for e in result.entries] == [entry.commit]
    assert (result.problem.kind, result.problem.ref, result.problem.commit) == ("malformed", REF, junk)
    assert result.problem.detail and result.problem.detail != "None"


def test_the_first_new_entry_must_name_the_verified_entry_it_stands_on(bare_repo: pygit2.Repository) -> None:
    """A walk that stops at a commit the reader verified before still checks that the first new entry's ``prev``
    names that commit's entry: a validly signed v2 entry whose parent is the verified commit but whose ``prev``
    names something else is a bad link, not a continuation (mutation testing found this boundary unasserted)."""
    from gitive.core import canonical, signed

    first, second = _entries(bare_repo, 2)
    body = dict(second.body)
    body["prev"] = logs.entry_hash(b"another entry altogether")
    data = canonical.dumps(signed.sign(A.key, TEAM_ID, "team", body))
    forged = logs.write_commit(bare_repo, data, body, first.commit)
    known = {first.commit: 1}.get
    result, base = verify.verify_chain(bare_repo, TEAM_ID, REF, A.id, "team", forged, known, now=AT)
    assert base == 1 and result.entries == []
    assert (result.problem.kind, result.problem.commit, result.problem.seq) == ("bad-link", forged, 2)
    honest, _ = verify.verify_chain(bare_repo, TEAM_ID, REF, A.id, "team", second.commit, known, now=AT)
    assert honest.problem is None and [e.commit for e in honest.entries] == [second.commit]
