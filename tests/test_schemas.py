"""What the code writes validates against refs_schema/, and every record kind has a schema."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pygit2
import pytest
from jsonschema import Draft202012Validator

from gitive.cli.main import run
from gitive.core import records
from gitive.store import logs
from testing import people, schemas

SCHEMAS = Path(__file__).resolve().parent.parent / "refs_schema"


def _validator() -> Draft202012Validator:
    return schemas.validator()


def test_every_record_kind_has_a_schema_in_the_entry_union() -> None:
    union = json.loads((SCHEMAS / "entry.schema.json").read_text())["properties"]["body"]["properties"]
    named = {ref["$ref"] for ref in union["record"]["oneOf"]}
    for kind in records.KINDS:
        assert f"{kind}.schema.json" in named
        assert (SCHEMAS / f"{kind}.schema.json").exists()


@pytest.fixture
def team_with_two_machines(bare_remote: Path, make_clone, machine_home, monkeypatch) -> Path:
    alice = make_clone(bare_remote, "alice")
    monkeypatch.setenv("GITIVE_HOME", str(machine_home("alice")))
    monkeypatch.chdir(alice)
    assert people.run_deciding(["init", "--person", "alice", "--machine", "laptop"]) == 0
    assert run(["sync"]) == 0
    code_file = alice / ".." / "code"
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert people.run_deciding(["invite", "--person", "bob"]) == 0
    code_file.write_text(out.getvalue().strip())
    bob = make_clone(bare_remote, "bob")
    monkeypatch.setenv("GITIVE_HOME", str(machine_home("bob")))
    monkeypatch.chdir(bob)
    assert people.run_deciding(["join", code_file.read_text(), "--person", "bob", "--machine", "desk"]) == 0
    assert people.run_deciding(["team", "remove", "bob/desk"]) == 0
    return bob


def test_written_entries_validate_against_the_schemas(team_with_two_machines: Path) -> None:
    repo = pygit2.Repository(str(team_with_two_machines))
    validator = _validator()
    layout = json.loads((SCHEMAS / "refs.json").read_text())
    patterns = [re.compile(r["regex"]) for r in layout["refs"]]
    kinds = set()
    for ref in repo.references:
        if not ref.startswith("refs/hive"):
            continue
        assert any(p.match(ref) for p in patterns), f"{ref} matches no pattern in refs.json"
        if "/logs/" not in ref:
            continue
        for entry in logs.entries(repo, ref):
            errors = sorted(validator.iter_errors(json.loads(entry.raw)), key=str)
            assert not errors, f"{ref} seq {entry.seq}: {errors[0].message}"
            kinds.add(entry.kind)
    assert kinds == {"member", "team", "invite", "project-member", "person-key"}


def test_schema_refuses_what_the_code_refuses() -> None:
    validator = _validator()
    bad = {"body": {"author": "a" * 64, "log": "roster", "scope": {"team": True}, "seq": 0, "at": 1,
                    "record": {"type": "team", "name": "x", "founder": "a" * 64}}, "by": "a" * 64, "sig": "0" * 128}
    assert list(validator.iter_errors(bad))
    with pytest.raises(Exception, match="positive"):
        records.check_entry(bad["body"])


def _v2(seq: int, **over: object) -> dict:
    body = {"v": 2, "author": "a" * 64, "log": "roster", "scope": {"team": True}, "seq": seq, "at": 1,
            "record": {"type": "team", "name": "x", "founder": "a" * 64}, **over}
    return {"body": body, "by": "a" * 64, "sig": "0" * 128}


@pytest.mark.parametrize(("case", "ok"), [
    (_v2(1), True),
    (_v2(2, prev="b" * 64), True),
    (_v2(2), False),  # prev required above seq 1
    (_v2(1, prev="b" * 64), False),  # and absent at seq 1
    (_v2(2, prev="B" * 64), False),
    (_v2(2, prev="b" * 64, v=3), False),
    ({**_v2(2, prev="b" * 64), "body": {k: v for k, v in _v2(2, prev="b" * 64)["body"].items() if k != "v"}},
     False),  # a v1 entry has no prev
], ids=["v2-root", "v2-linked", "v2-no-prev", "v2-root-prev", "v2-upper-hex", "v3", "v1-with-prev"])
def test_schema_and_code_agree_on_v2_entries(case: dict, ok: bool) -> None:
    schema_ok = not list(_validator().iter_errors(case))
    try:
        records.check_entry(case["body"])
        code_ok = True
    except Exception:
        code_ok = False
    assert schema_ok == code_ok == ok
