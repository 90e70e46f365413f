"""Every lesson-related entry and body gitive writes validates against ``refs_schema/``."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pygit2
from jsonschema import Draft202012Validator

from gitive.capture import events
from gitive.store import bodies, logs
from gitive.store.snapshots import FANOUT, FLAT
from testing import live, schemas, sealed
from testing.lessons import PASSPHRASE_ANSWER, as_person, confirmed, propose
from testing.machines import Machine


def events_of(machine: Machine) -> list[dict[str, Any]]:
    with live.on(machine):
        return list(events.read())

SCHEMAS = Path(__file__).resolve().parents[2] / "refs_schema"


def _validator(name: str = "entry.schema.json") -> Draft202012Validator:
    return schemas.validator(name)


def _check_store(path: Path, entries: Draft202012Validator, body: Draft202012Validator,
                 sealed_names: set[str] = frozenset()) -> dict[str, int]:  # type: ignore[assignment]
    """Validate every log entry and every body under ``refs/hive*`` of one repository; count entries by kind.

    A body stored under one of ``sealed_names`` is a sealed body: its plaintext was validated where it opened."""
    repo = pygit2.Repository(str(path))
    patterns = [re.compile(r["regex"]) for r in json.loads((SCHEMAS / "refs.json").read_text())["refs"]]
    kinds: dict[str, int] = {}
    for ref in repo.references:
        if not ref.startswith("refs/hive"):
            continue
        assert any(p.match(ref) for p in patterns), f"{ref} matches no pattern in refs.json"
        if "/logs/" in ref:
            for entry in logs.entries(repo, ref):
                errors = sorted(_errors(entries, json.loads(entry.raw)), key=str)
                assert not errors, f"{path}:{ref} seq {entry.seq} ({entry.kind}): {errors[0]}"
                kinds[entry.kind] = kinds.get(entry.kind, 0) + 1
        elif "/bodies/" in ref:
            commit = repo[repo.references[ref].target]
            layout = FANOUT if "Hive-Layout: fanout-2" in commit.message else FLAT
            for name, blob in bodies.entries(repo, str(commit.tree_id), layout):
                if name in sealed_names:
                    continue
                value = json.loads(repo[blob].data)
                errors = sorted(_errors(body, value), key=str)
                assert not errors, f"{path}:{ref} body {name[:12]}: {errors[0]}"
    return kinds


def _errors(validator: Draft202012Validator, value: Any) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(value)]


def test_lesson_review_tombstone_and_project_member_entries_validate(trio: list[Machine]) -> None:
    a, b, c = trio
    session = live.start_session(a)
    [event_id, *_] = [e["event"]["id"] for e in events_of(a)]
    plain = propose(a, "Run make gen after editing api.proto", "--tag", "codegen", "--tag", "proto",
                    "--applicability", "when api.proto changes", "--session", session)
    quoted = a.ok("lessons", "propose", "--kind", "Preference", "--text", "Bob wants generated code checked in",
                  "-e", "commit:HEAD", "--quote", "add the api schema", "--speaker", "carol", "--about", "bob",
                  ).out.strip()
    event = propose(a, "The flaky test is the clock one", evidence=[f"event:{event_id}"])
    personal = propose(a, "Note to self: coffee before protos", "--scope", "personal")
    team = propose(a, "We release on Tuesdays", "--scope", "team")
    code, out = as_person(a, "project", "confirm", "bob", answers=[("Confirm bob", "y\n"), PASSPHRASE_ANSWER])
    assert code == 0, out
    code, out = as_person(a, "project", "confirm", "carol", "--owner", answers=[("Confirm carol", "y\n"), PASSPHRASE_ANSWER])
    assert code == 0, out
    a.ok("sync")
    b.ok("sync")
    confirmed(b, "review", "approve", plain, "--text", "Run `make gen` after editing api.proto", "--note", "yes")
    confirmed(b, "review", "reject", quoted, "--note", "hearsay")
    confirmed(b, "review", "approve", team)
    b.ok("sync")
    a.ok("sync")
    newer = a.ok("lessons", "supersede", plain, "--kind", "Correction", "--text", "Run buf generate instead",
                 "-e", "file:api.proto").out.strip()
    confirmed(a, "review", "approve", personal)
    confirmed(a, "retract", event, "--reason", "not true", prompt="Retract it for everyone?")
    for m in (a, b, c):
        m.ok("sync")
    assert a.json("lessons", "show", newer)["supersedes"] == plain
    assert a.json("lessons", "show", quoted)["hearsay"] is True

    entries, body = _validator(), _validator("lesson-body.schema.json")
    seen: dict[str, int] = {}
    sealed_names = {row[0] for m in (a, b, c) for row in sealed.index_rows(
        m.clone / ".git" / "gitive" / "index.sqlite", "SELECT name FROM sealed_bodies")}
    assert sealed_names  # the personal lesson's body, opened on its author's machine
    for m in (a, b, c):
        for store in (m.clone, m.home / "personal.git"):
            if store.exists():
                for kind, n in _check_store(store, entries, body, sealed_names).items():
                    seen[kind] = seen.get(kind, 0) + n
    assert {"lesson", "review", "tombstone", "project-member", "sealed", "scope-key"} <= set(seen)
    assert seen["project-member"] >= 5  # three claims or proposals, two confirmations
    assert seen["review"] >= 5


def test_schemas_refuse_malformed_lesson_records() -> None:
    validator = _validator()
    machine = "a" * 64
    hex64 = "b" * 64

    def entry(record: dict[str, Any]) -> dict[str, Any]:
        return {"body": {"author": machine, "log": "project", "scope": {"project": hex64}, "seq": 1, "at": 1,
                         "record": record}, "by": machine, "sig": "0" * 128}

    good = {"type": "lesson", "id": hex64, "kind": "Gotcha", "tags": [], "body_hash": hex64, "hearsay": False,
            "evidence": [{"kind": "file", "ref": "abc:api.proto", "digest": hex64, "path": "api.proto"}]}
    assert not list(validator.iter_errors(entry(good)))
    for bad in ({**good, "kind": "Rumour"}, {**good, "evidence": []}, {**good, "extra": 1},
                {k: v for k, v in good.items() if k != "hearsay"},
                {"type": "review", "about": hex64, "approver": "Bob!", "approved": True, "note": ""},
                {"type": "tombstone", "lesson": hex64, "reason": "x"},
                {"type": "project-member", "project": hex64, "person": "bob", "role": "admin", "confirmed": True}):
        assert list(validator.iter_errors(entry(bad))), bad
    body = _validator("lesson-body.schema.json")
    assert list(body.iter_errors({"text": "x" * 1201, "applicability": "", "quote": None}))
    assert list(body.iter_errors({"text": "x", "applicability": "", "quote": {"speaker": "a"}}))
