"""Entry format v2 (docs/verification.md §1): canonical commit form, prev links, authentication by hash links,
and the v1 logs written before it, which still read and continue in v2."""

from __future__ import annotations

from typing import Any

import pygit2
import pytest

from gitive.core import canonical, records, signed
from gitive.errors import InvalidRecord
from gitive.store import logs, refs, verify
from testing.builders import TEAM_ID, TEAM_SCOPE, entry_body, machine

A = machine("v2-a")
B = machine("v2-b")
REF = refs.log_ref(A.id, "team")
AT = 1_700_000_000_000


def note(name: str, who: Any = A) -> dict[str, Any]:
    return {"type": "team", "name": name, "founder": who.id}


def old_writer(repo: pygit2.Repository, data: bytes, entry: dict[str, Any], parent: str | None) -> str:
    """The entry writer of gitive before format v2 (pygit2 objects and ``create_commit``), kept verbatim."""
    blob = repo.create_blob(data)
    builder = repo.TreeBuilder()
    builder.insert("entry.json", blob, pygit2.enums.FileMode.BLOB)
    tree = builder.write()
    who = pygit2.Signature(entry["author"][:16], f"{entry['author']}@hive", entry["at"] // 1000, 0)
    parents = [pygit2.Oid(hex=parent)] if parent else []
    return str(repo.create_commit(None, who, who, logs.summary(entry) + "\n", tree, parents))


def v1_log(repo: pygit2.Repository, n: int, records_: list[dict[str, Any]] | None = None) -> list[str]:
    """A v1 log of ``n`` entries as the old writer stored it, with the ref pointing at its tip."""
    tip, out = None, []
    for seq in range(1, n + 1):
        record = (records_ or [])[seq - 1] if records_ else note(f"old {seq}")
        body = entry_body(A, record, seq=seq, at=AT + seq * 1000, log="team")
        env = signed.sign(A.key, TEAM_ID, record["type"], body)
        tip = old_writer(repo, canonical.dumps(env), body, tip)
        out.append(tip)
    repo.references.create(REF, tip, force=True)
    return out


def append(repo: pygit2.Repository, name: str, who: Any = A) -> logs.Entry:
    return logs.append(repo, who.key, TEAM_ID, "team", TEAM_SCOPE, note(name, who), at=AT + 10**6)


def run(repo: pygit2.Repository, tip: str, known: dict[str, int] | None = None,
        refused: str | None = None) -> verify.Verified:
    return verify.verify_chain(repo, TEAM_ID, REF, A.id, "team", tip, (known or {}).get, refused=refused)[0]


def signed_v2(seq: int, prev: str | None, who: Any = A, *, key: Any = None, name: str | None = None,
              **over: Any) -> bytes:
    body: dict[str, Any] = {"v": 2, **entry_body(who, note(name or f"n{seq}", who), seq=seq, at=AT + seq, log="team")}
    if prev:
        body["prev"] = prev
    body.update(over)
    env = signed.sign((key or who.key), TEAM_ID, "team", body)
    return canonical.dumps({**env, "by": who.id})  # signed by ``key``, claiming ``who``


def write(repo: pygit2.Repository, data: bytes, parent: str | None) -> str:
    return logs.write_commit(repo, data, canonical.loads(data)["body"], parent)


def test_commits_of_the_old_writer_verify_unchanged(bare_repo: pygit2.Repository) -> None:
    records_ = [note("a"), {"type": "member", "machine": A.id, "person": "alice", "name": "lap", "role": "member",
                            "active": True, "emails": ["a@x.invalid"], "ts": AT},
                {"type": "invite", "id": "ab" * 32, "key": B.id, "reusable": False, "expires": AT}]
    made = v1_log(bare_repo, 3, records_)
    result = verify.verify_chain(bare_repo, TEAM_ID, REF, A.id, "team", made[-1], lambda _: None)[0]
    assert result.problem is None and [e.commit for e in result.entries] == made
    assert result.signature_checked == (True, True, True)  # v1 entries vouch for nothing below them
    for entry in result.entries:  # the new writer builds the very same commits
        assert logs.write_commit(bare_repo, entry.raw, entry.body, entry.parent) == entry.commit


def test_a_v1_log_continues_in_v2_on_its_next_append(bare_repo: pygit2.Repository) -> None:
    made = v1_log(bare_repo, 3)
    fourth = append(bare_repo, "new")
    assert fourth.version == 2 and fourth.seq == 4 and fourth.parent == made[-1]
    assert fourth.body["prev"] == logs.read_entry(bare_repo, made[-1]).hash
    fifth = append(bare_repo, "newer")
    result = run(bare_repo, fifth.commit)
    assert result.problem is None and [e.seq for e in result.entries] == [1, 2, 3, 4, 5]
    # the tip's signature vouches for 4 and, through 4's prev, for the last v1 entry; 1 and 2 stand alone
    assert result.signature_checked == (True, True, False, False, True)


def test_one_signature_authenticates_a_whole_v2_chain(bare_repo: pygit2.Repository) -> None:
    made = [append(bare_repo, f"n{i}") for i in range(6)]
    result = run(bare_repo, made[-1].commit)
    assert result.problem is None and len(result.entries) == 6
    assert result.signature_checked == (False,) * 5 + (True,)


def test_a_v1_entry_above_a_v2_entry_is_malformed(bare_repo: pygit2.Repository) -> None:
    two = append(bare_repo, "v2")
    body = entry_body(A, note("back to v1"), seq=2, at=AT, log="team")
    back = write(bare_repo, canonical.dumps(signed.sign(A.key, TEAM_ID, "team", body)), two.commit)
    result = run(bare_repo, back)
    assert [e.commit for e in result.entries] == [two.commit]
    assert result.problem.kind == "malformed" and "v1 entry above a v2" in result.problem.detail


def test_a_prev_that_names_another_entry_is_a_bad_link(bare_repo: pygit2.Repository) -> None:
    one = append(bare_repo, "one")
    forged = write(bare_repo, signed_v2(2, "cd" * 32), one.commit)  # signed by A, but linked to nothing
    result = run(bare_repo, forged)
    assert [e.commit for e in result.entries] == [one.commit]
    assert result.problem.kind == "bad-link" and result.problem.seq == 2


@pytest.mark.parametrize("how", ["message", "time", "extra-file", "extra-parent", "encoding", "gpgsig",
                                 "author-name"])
def test_the_same_signed_bytes_in_another_commit_are_malformed(bare_repo: pygit2.Repository, how: str) -> None:
    one = append(bare_repo, "one")
    two = append(bare_repo, "two")
    canonical_bytes = bare_repo.odb.read(two.commit)[1]
    blob = bare_repo.create_blob(two.raw)
    tree = str(bare_repo.odb.read(two.commit)[1].split(b"\n")[0][5:].decode())
    text = canonical_bytes.decode()
    if how == "message":
        text = text.replace("\n\nteam #2", "\n\nrewrapped team #2")
    elif how == "time":
        text = text.replace(f" {(AT + 10**6) // 1000} +0000", f" {(AT + 10**6) // 1000 + 1} +0000", 1)
    elif how == "extra-file":
        builder = bare_repo.TreeBuilder()
        builder.insert("entry.json", blob, pygit2.enums.FileMode.BLOB)
        builder.insert("zz", blob, pygit2.enums.FileMode.BLOB)
        text = text.replace(tree, str(builder.write()))
    elif how == "extra-parent":
        text = text.replace(f"parent {one.commit}\n", f"parent {one.commit}\nparent {one.commit}\n")
    elif how == "encoding":
        text = text.replace("\n\n", "\nencoding UTF-8\n\n", 1)
    elif how == "gpgsig":
        text = text.replace("\n\n", "\ngpgsig -----BEGIN PGP SIGNATURE-----\n -----END PGP SIGNATURE-----\n\n", 1)
    elif how == "author-name":
        text = text.replace(A.id[:16] + " <", A.id[:15] + "X <", 1)
    rewrapped = str(bare_repo.odb.write(pygit2.enums.ObjectType.COMMIT, text.encode()))
    assert rewrapped != two.commit
    with pytest.raises(InvalidRecord, match=r"canonical commit form|more than one parent|exactly one"):
        logs.read_entry(bare_repo, rewrapped)
    result = run(bare_repo, rewrapped)
    assert [e.commit for e in result.entries] == [one.commit] and result.problem.kind == "malformed"


def test_an_inner_signature_that_fails_is_vouched_for_by_the_entry_above(bare_repo: pygit2.Repository) -> None:
    one = append(bare_repo, "one")
    bad = canonical.loads(signed_v2(2, one.hash))
    bad["sig"] = signed.sign(B.key, TEAM_ID, "team", bad["body"])["sig"]  # A's body, B's signature
    two = write(bare_repo, canonical.dumps(bad), one.commit)
    two_entry = logs.read_entry(bare_repo, two)
    three = write(bare_repo, signed_v2(3, two_entry.hash), two)
    result = run(bare_repo, three)
    assert result.problem is None and [e.seq for e in result.entries] == [1, 2, 3]
    assert result.signature_checked == (False, False, True)
    assert not verify.signature_ok(TEAM_ID, result.entries[1])  # for the background check to report
    alone = run(bare_repo, two)  # as a tip, nothing vouches for it
    assert [e.seq for e in alone.entries] == [1] and alone.problem.kind == "bad-signature"


def test_a_forged_tip_leaves_the_authentic_prefix(bare_repo: pygit2.Repository) -> None:
    made = [append(bare_repo, f"n{i}") for i in range(4)]
    forged = write(bare_repo, signed_v2(5, made[-1].hash, key=B.key), made[-1].commit)
    result = run(bare_repo, forged)
    assert [e.commit for e in result.entries] == [e.commit for e in made]
    assert result.problem.kind == "bad-signature" and result.problem.seq == 5
    assert result.signature_checked == (False, False, False, True)  # the entry below the forgery vouches


def test_a_walk_that_reaches_a_refused_tip_stops_there(bare_repo: pygit2.Repository) -> None:
    one = append(bare_repo, "one")
    junk = write(bare_repo, signed_v2(2, one.hash, key=B.key), one.commit)
    more = write(bare_repo, signed_v2(3, "ab" * 32, key=B.key), junk)
    result = run(bare_repo, more, known={one.commit: 1}, refused=junk)
    assert result.stopped_at_refused and result.entries == [] and result.problem is None


def test_prev_is_required_above_seq_one_and_absent_at_it() -> None:
    base = {"v": 2, **entry_body(A, note("x"), seq=1, log="team")}
    assert records.check_entry(base) == "team"
    with pytest.raises(InvalidRecord, match="seq 1 has a `prev`"):
        records.check_entry({**base, "prev": "ab" * 32})
    with pytest.raises(InvalidRecord, match="prev"):
        records.check_entry({**base, "seq": 2})
    with pytest.raises(InvalidRecord, match="`v` must be 2"):
        records.check_entry({**base, "v": 3})
    with pytest.raises(InvalidRecord, match="exactly the fields"):
        records.check_entry({k: v for k, v in base.items() if k != "v"} | {"seq": 2, "prev": "ab" * 32})


@pytest.mark.parametrize(("kind", "field", "value"), [
    ("team", "name", "x" * 1025),
    ("review", "note", "y" * (8 * 1024 + 1)),
    ("message", "body", "z" * (64 * 1024 + 1)),
    ("member", "emails", ["a" * 100 + "@x.invalid"] * 50),
    ("member", "ts", 2**63),
])
def test_every_field_is_capped_and_the_error_names_it(kind: str, field: str, value: Any) -> None:
    ok = {
        "team": {"type": "team", "name": "acme", "founder": A.id},
        "review": {"type": "review", "about": "ab" * 32, "approver": "alice", "approved": True, "note": ""},
        "message": {"type": "message", "id": "01ARZ3NDEKTSV4RRFFQ69G5FAV", "from": "a/b", "to": "c/d",
                    "recipients": [], "body": "hi", "from_person": False},
        "member": {"type": "member", "machine": A.id, "person": "alice", "name": "lap", "role": "member",
                   "active": True, "emails": [], "ts": 1},
    }[kind]
    records.check_record(ok)
    with pytest.raises(InvalidRecord, match=f"`{field}`"):
        records.check_record({**ok, field: value})
    v1 = {**entry_body(A, {**ok, field: value}, log="team")}  # written before caps: the entry cap alone
    if field != "ts":
        assert records.check_entry(v1) == kind
    with pytest.raises(InvalidRecord, match=f"`{field}`"):
        records.check_entry({"v": 2, **v1})
    # read back from stored bytes: the entry's own size lets small caps go unmeasured, never a field over its cap
    stored = canonical.dumps(signed.sign(A.key, TEAM_ID, kind, {"v": 2, **v1}))
    with pytest.raises(InvalidRecord, match=f"`{field}`"):
        records.check_entry({"v": 2, **v1}, within=len(stored))


def test_a_new_field_gets_its_types_cap_without_a_line_of_its_own() -> None:
    assert records.field_cap("invite", "note", "str") == records.TYPE_CAPS["str"]
    assert records.field_cap("message", "body", "str") == records.MAX_MESSAGE_BODY
    assert records.field_cap("invite", "id", "hex") is None  # bounded by its own check
