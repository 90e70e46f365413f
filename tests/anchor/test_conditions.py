"""Conditions: checked when written (vocabulary, syntax, cost), evaluated three ways, dispatched without loss."""

from __future__ import annotations

import json
from typing import Any

import pytest
from celpy.adapter import json_to_cel
from hypothesis import given, settings
from hypothesis import strategies as st

from gitive.anchor.obligations import conditions, events
from gitive.anchor.obligations.conditions import (
    COST_LIMIT,
    MAX_LIST,
    ConditionError,
    Dispatch,
    analyse,
    compile_condition,
    evaluate,
)
from gitive.anchor.obligations.evaluation import value_at
from gitive.anchor.obligations.vocabulary import load

REFERENCE_EXAMPLE = 'e.event.action == "vcs.merged" && e.branch == "auth-rotation"'  # HO P3 §6, verbatim


def _event(action: str, **groups: Any) -> dict[str, Any]:
    return events.make(action, 1_000, "ref", "origin", "id-" + action, **groups)


def _run(text: str, event: dict[str, Any]) -> conditions.Outcome:
    return evaluate(compile_condition(text), json_to_cel(event), events.longest_list(event))


def test_the_reference_example_is_refused_with_the_right_spelling() -> None:
    with pytest.raises(ConditionError, match=r"e\.branch.*did you mean e\.vcs\.branch\?"):
        analyse(REFERENCE_EXAMPLE)
    fixed = REFERENCE_EXAMPLE.replace("e.branch", "e.vcs.branch")
    merged = _event("vcs.merged", vcs={"branch": "auth-rotation", "into": "main"})
    assert _run(fixed, merged).matched
    assert not _run(fixed, _event("vcs.merged", vcs={"branch": "other"})).matched


@pytest.mark.parametrize(("text", "message"), [
    ('e.event.action == "vcs.mergd"', "did you mean 'vcs.merged'"),
    ('e.event.action == "pr.merged"', "did you mean 'vcs.merged'"),
    ('e.vcs.brnch == "x"', "did you mean e.vcs.branch"),
    ('e.event.action == ', "does not parse: line 1, column"),
    ('e.event.action == "vcs.merged" &&', "does not parse"),
    ("x.y == 1", "which is not defined"),
    ("frobnicate(e.ts)", "frobnicate()"),
    ("", "empty"),
    ("e.vcs.files.exists(a, e.vcs.files.exists(b, e.vcs.files.exists(c, a == b)))", "over the 5,000,000 limit"),
])
def test_a_bad_condition_is_refused_with_the_reason(text: str, message: str) -> None:
    with pytest.raises(ConditionError, match=message.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
        analyse(text)


def test_watcher_fields_are_free_under_watch_data() -> None:
    a = analyse('e.event.action == "watch.ci.failed" && e.watch.data.job.name == "lint"')
    assert a.keys.exact == frozenset({"watch.ci.failed"}) and a.equalities == {"watch.data.job.name": "lint"}


def test_a_missing_field_is_no_match_and_a_type_error_is_an_error() -> None:
    event = _event("vcs.branch_created", vcs={"branch": "x"})
    assert _run('e.vcs.tag == "v1"', event) == conditions.NO_MATCH
    outcome = _run('e.vcs.branch > 3', event)
    assert not outcome.matched and outcome.error
    assert _run("e.ts / 0 == 1", event).error == "divide by zero"
    assert "not true or false" in (_run("e.ts", event).error or "")


def test_over_the_cost_limit_at_evaluation_is_an_error_never_a_match() -> None:
    text = "e.vcs.files.exists(a, e.vcs.files.exists(b, a == b))"
    compiled = compile_condition(text)
    huge = 3_000  # a hostile event: far more items than events carry
    assert compiled.analysis.cost(huge) > COST_LIMIT
    outcome = evaluate(compiled, json_to_cel({"vcs": {"files": ["x"] * 3}}), huge)
    assert not outcome.matched and "over the cost limit" in (outcome.error or "")


def test_programs_are_compiled_once_per_process() -> None:
    text = 'e.event.action == "clock.day" && e.clock.weekday == 1'
    assert compile_condition(text) is compile_condition(text)


def test_every_field_and_action_is_documented_in_docs_events_md() -> None:
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "events.md").read_text()
    vocab = load()
    missing = [f for f in vocab.fields if f"`{f}`" not in doc] + [a for a in vocab.actions if f"`{a}`" not in doc]
    assert missing == []


def test_every_record_kind_is_an_event() -> None:
    from gitive.core.records import KINDS

    vocab = load()
    for kind in KINDS:
        action = vocab.record_action(kind, {"active": True, "approved": True, "state": "done"})
        assert vocab.action(action) is not None, kind


def test_the_shipped_vocabulary_is_refs_schema_events_json() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    assert json.loads((root / "refs_schema" / "events.json").read_text()) == json.loads(
        (root / "gitive" / "anchor" / "obligations" / "events.json").read_text())


# --- dispatch never loses a match ----------------------------------------------------------------------------

ACTIONS = ["vcs.merged", "vcs.branch_moved", "message.sent", "watch.ci.failed", "clock.day"]
BRANCHES = ["main", "auth-rotation", "x"]
atom = st.one_of(
    st.sampled_from(ACTIONS).map(lambda a: f'e.event.action == "{a}"'),
    st.lists(st.sampled_from(ACTIONS), min_size=1, max_size=3).map(lambda xs: f"e.event.action in {json.dumps(xs)}"),
    st.sampled_from(["vcs.", "watch.", "message"]).map(lambda p: f'e.event.action.startsWith("{p}")'),
    st.sampled_from(BRANCHES).map(lambda b: f'e.vcs.branch == "{b}"'),
    st.sampled_from(BRANCHES).map(lambda b: f'"{b}" == e.vcs.into'),
    st.just("has(e.vcs.into)"), st.just("e.ts > 500"), st.just("e.vcs.forced"),
)
expr = st.recursive(atom, lambda inner: st.one_of(
    st.tuples(inner, inner).map(lambda ab: f"({ab[0]} && {ab[1]})"),
    st.tuples(inner, inner).map(lambda ab: f"({ab[0]} || {ab[1]})"),
    inner.map(lambda a: f"!({a})"),
), max_leaves=5)
event_strategy = st.builds(
    lambda action, branch, into, forced, ts: events.make(
        action, ts, "ref", "origin", "e", vcs={"branch": branch, "into": into, "forced": forced}),
    st.sampled_from(ACTIONS), st.sampled_from(BRANCHES), st.sampled_from([None, *BRANCHES]), st.booleans(),
    st.integers(0, 1_000))


@settings(max_examples=200, deadline=None)
@given(st.lists(expr, min_size=1, max_size=6), st.lists(event_strategy, min_size=1, max_size=6))
def test_dispatch_offers_every_condition_that_an_event_satisfies(texts: list[str], batch: list[dict[str, Any]]
                                                                 ) -> None:
    dispatch = Dispatch()
    for i, text in enumerate(texts):
        dispatch.add(str(i), analyse(text))
    for event in batch:
        offered = set(dispatch.candidates(event["event"]["action"], lambda p, e=event: value_at(e, p)))
        for i, text in enumerate(texts):
            if _run(text, event).matched:
                assert str(i) in offered, (text, event["event"]["action"], event["vcs"])


def _cap_each(value: object, depth: int = 0) -> object:
    """events.cap as it was before its flat-dict shortcut: the reference it must agree with."""
    if isinstance(value, str):
        return value[:events.MAX_TEXT]
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return value
    if isinstance(value, float):
        return repr(value)
    if depth >= events.MAX_DEPTH:
        return None
    if isinstance(value, dict):
        return {str(k)[:64]: _cap_each(v, depth + 1) for k, v in list(value.items())[:MAX_LIST]}
    if isinstance(value, list | tuple):
        return [_cap_each(v, depth + 1) for v in list(value)[:MAX_LIST]]
    return str(value)[:events.MAX_TEXT]


_cap_leaves = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) \
    | st.text(max_size=3) | st.text(min_size=1030, max_size=1040)
_cap_keys = st.text(max_size=3) | st.text(min_size=65, max_size=70) | st.integers()


@given(st.recursive(_cap_leaves, lambda children: st.lists(children, max_size=4)
                    | st.dictionaries(_cap_keys, children, max_size=4), max_leaves=12),
       st.integers(min_value=0, max_value=7))
def test_cap_with_its_shortcut_bounds_values_as_before(value: object, depth: int) -> None:
    assert events.cap(value, depth) == _cap_each(value, depth)


@pytest.mark.parametrize("value", [
    {"text": "x" * 2000, "n": 1},             # a long string in an otherwise flat group
    {"k" * 80: "v"},                          # a long key
    {"n": 1.5},                               # a float
    {1: "a"},                                 # a key that is no string
    {"nested": {"a": "b"}, "list": [1, 2]},   # not flat
    {f"k{i}": i for i in range(MAX_LIST + 5)},  # more keys than a group keeps
    {"plain": "v", "n": 3, "b": True, "none": None},
])
def test_cap_bounds_each_kind_of_group_as_before(value: dict[Any, Any]) -> None:
    assert events.cap(value) == _cap_each(value)
    assert events.cap(value, events.MAX_DEPTH) == _cap_each(value, events.MAX_DEPTH)
