"""The schema checker every argument and result goes through, held to the ``jsonschema`` library, and the text
cleaning that keeps a lone surrogate from hanging a call."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gitive.mcp import outputs, schema, table

SCHEMAS = [t.inputs for t in table.TOOLS] + list(outputs.ALL.values())
JSON = st.recursive(st.none() | st.booleans() | st.integers(-10, 10_000) | st.floats(allow_nan=False,
                                                                                       allow_infinity=False)
                    | st.text(max_size=70), lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=12), inner, max_size=4), max_leaves=12)


def _conforming(value: Any, spec: dict[str, Any]) -> bool:
    return jsonschema.Draft202012Validator(spec).is_valid(value)


@pytest.mark.parametrize("spec", SCHEMAS, ids=lambda s: ",".join(list(s.get("properties", {}))[:3]))
def test_every_schema_is_valid_json_schema(spec: dict[str, Any]) -> None:
    jsonschema.Draft202012Validator.check_schema(spec)


@settings(max_examples=400, deadline=None)
@given(spec=st.sampled_from(SCHEMAS), data=st.data())
def test_the_checker_agrees_with_jsonschema(spec: dict[str, Any], data: st.DataObject) -> None:
    props = spec.get("properties", {})
    # Objects built from the schema's own field names reach the interesting branches far more often.
    value = data.draw(st.one_of(JSON, st.dictionaries(st.sampled_from(sorted(props) or ["x"]), JSON, max_size=6)))
    found = schema.check(spec, value)
    assert (found is None) == _conforming(value, spec), (value, found)
    if found is not None:
        assert "\n" not in found and len(found) < 400


@settings(max_examples=200, deadline=None)
@given(tool=st.sampled_from(table.TOOLS), data=st.data())
def test_the_checker_agrees_on_values_near_each_argument_limit(tool: table.Tool, data: st.DataObject) -> None:
    name, spec = data.draw(st.sampled_from(sorted(tool.inputs["properties"].items())))
    value = data.draw(_near(spec))
    args = {name: value}
    assert (schema.check(tool.inputs, args) is None) == _conforming(args, tool.inputs), (name, value)


def _near(spec: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values on both sides of a schema's limits."""
    kind = spec.get("type")
    if kind == "string":
        cap = spec["maxLength"]
        return st.sampled_from([*spec.get("enum", []), "", "x" * cap, "x" * (cap + 1)]) | st.text(max_size=8)
    if kind == "integer":
        low = spec["minimum"]
        return st.sampled_from([low - 1, low, low + 1, spec.get("maximum", low + 5) + 1, 3.0, 2.5, True])
    if kind == "array":
        item = _near(spec["items"])
        return st.lists(item, max_size=spec["maxItems"] + 1)
    return JSON


def test_errors_are_one_short_line_whatever_the_value() -> None:
    spec = table.BY_NAME["claim_files"].inputs
    huge = "a" * (1 << 20)
    problems = [schema.check(spec, {"paths": [huge]}), schema.check(spec, {"paths": ["x"], "note": huge}),
                schema.check(spec, {"paths": huge}), schema.check(spec, {huge: 1, "paths": ["x"]}),
                schema.check(spec, {"paths": ["x"], "minutes": "soon"}), schema.check(spec, {})]
    for problem in problems:
        assert problem and "\n" not in problem and len(problem) < 200, problem
    assert problems[0] == "paths[0] is 1,048,576 characters; at most 1,024"
    assert problems[4] == "minutes must be an integer, not a string ('soon')"
    assert problems[5] == "paths is missing"


def test_a_misspelled_argument_is_named_with_the_right_spelling() -> None:
    found = schema.check(table.BY_NAME["search_memory"].inputs, {"querry": "x"})
    assert found == "unknown argument 'querry' (did you mean query?)"


def test_a_lone_surrogate_becomes_the_replacement_character() -> None:
    parsed = json.loads('{"id": "s\\ud800", "nested": [{"k\\udfff": "ok \\ud83d\\ude00"}]}')
    cleaned = schema.clean(parsed)
    assert cleaned == {"id": "s\ufffd", "nested": [{"k\ufffd": "ok \U0001f600"}]}
    json.dumps(cleaned, ensure_ascii=False).encode()  # encodable now
