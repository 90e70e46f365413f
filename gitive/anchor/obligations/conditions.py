"""Obligation conditions: CEL over one event ``e``, checked when written, compiled once, evaluated three ways.

When a condition is written it is parsed, every field it names is checked against the vocabulary, every action
it compares ``e.event.action`` with must exist, and its cost bound must stay under :data:`COST_LIMIT`. A
condition that fails any of these is refused with the reason (and the right spelling, when one is close).

Evaluating one event gives ``True``, ``False`` or an error. An event that lacks a field the condition reads is
simply not the event it waits for (``False``); any other error (a type mismatch, a bad pattern, going over
the cost limit) is an error, and an error never fires an obligation.

The anchor does not evaluate every condition on every event: :func:`analyse` finds the actions a condition can
match and the literal equalities every match must have, and :class:`Dispatch` indexes conditions by them, so
an event is evaluated only against conditions that could match it.
"""

from __future__ import annotations

import ast
import logging
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, NamedTuple

from gitive.anchor.obligations.vocabulary import Vocabulary, load
from gitive.errors import InvalidRecord

COST_LIMIT = 5_000_000  # CEL units per evaluation, as Beacon caps its rules; over it is an error, never a match
MAX_LIST = 256  # events carry at most this many items in any list (events.py caps them)
MAX_CONDITION = 2_000  # characters
_MACROS = {"all", "exists", "exists_one", "map", "filter"}
_WRAPPERS = {"expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary",
             "member", "primary", "paren_expr"}
_FUNCTIONS = {"has", "size", "int", "uint", "double", "string", "bytes", "bool", "timestamp", "duration",
              "type", "dyn", "matches", "contains", "startsWith", "endsWith", "getDate", "getDayOfMonth",
              "getDayOfWeek", "getDayOfYear", "getFullYear", "getHours", "getMilliseconds", "getMinutes",
              "getMonth", "getSeconds", "null_type", "list", "map"}

logging.getLogger("celpy").setLevel(logging.CRITICAL)  # celpy logs every evaluation error it raises
sys.setrecursionlimit(max(sys.getrecursionlimit(), 2500))  # what celpy's Environment sets; set once, up front


class ConditionError(InvalidRecord):
    """A condition refused when written: it does not parse, names an unknown field or action, or costs too much."""


@dataclass(frozen=True)
class Keys:
    """The actions a condition can match: exact names and prefixes; ``None`` for both means any action."""

    exact: frozenset[str] | None = None
    prefixes: frozenset[str] = frozenset()

    @property
    def any(self) -> bool:
        return self.exact is None


@dataclass
class Analysis:
    fields: set[str] = field(default_factory=set)
    actions: set[str] = field(default_factory=set)  # action literals the condition compares with
    keys: Keys = field(default_factory=Keys)
    equalities: dict[str, Any] = field(default_factory=dict)  # path -> literal every match must have
    size: int = 0
    depth: int = 0  # nesting of comprehension macros

    def cost(self, longest: int) -> int:
        """An upper bound of the units one evaluation costs, for an event whose longest list has ``longest`` items."""
        return self.size * (longest + 1) ** self.depth


class Compiled(NamedTuple):
    text: str
    program: Any  # celpy Runner
    analysis: Analysis


def _env() -> Any:
    import celpy

    return _ENV.setdefault("env", celpy.Environment(runner_class=celpy.CompiledRunner))


_ENV: dict[str, Any] = {}


def _unwrap(node: Any) -> Any:
    while getattr(node, "data", None) in _WRAPPERS and len(node.children) == 1:
        node = node.children[0]
    return node


def _literal(node: Any) -> tuple[bool, Any]:
    node = _unwrap(node)
    if getattr(node, "data", None) != "literal":
        return False, None
    text = str(node.children[0])
    try:
        return True, ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return False, None


def _path(node: Any) -> str | None:
    """``a.b.c`` when ``node`` is ``e.a.b.c`` (dots or string indexes), ``""`` for ``e`` itself, else None."""
    node = _unwrap(node)
    data = getattr(node, "data", None)
    if data == "ident":
        return "" if str(node.children[0]) == "e" else None
    if data == "member_dot":
        base = _path(node.children[0])
        return None if base is None else f"{base}.{node.children[1]}".lstrip(".")
    if data == "member_index":
        base = _path(node.children[0])
        ok, key = _literal(node.children[1])
        if base is None or not ok or not isinstance(key, str):
            return None
        return f"{base}.{key}".lstrip(".")
    return None


def _walk(node: Any) -> Any:
    stack = [node]
    while stack:
        item = stack.pop()
        if hasattr(item, "data"):
            yield item
            stack.extend(reversed(item.children))


def _macro_vars(tree: Any) -> set[str]:
    out = set()
    for node in _walk(tree):
        if node.data == "member_dot_arg" and str(node.children[1]) in _MACROS and len(node.children) > 2:
            first = node.children[2].children[0] if node.children[2].children else None
            if first is not None and getattr(_unwrap(first), "data", None) == "ident":
                out.add(str(_unwrap(first).children[0]))
    return out


def _depth(node: Any) -> int:
    if not hasattr(node, "data"):
        return 0
    inner = max((_depth(c) for c in node.children), default=0)
    is_macro = node.data == "member_dot_arg" and str(node.children[1]) in _MACROS
    return inner + 1 if is_macro else inner


def _check_names(tree: Any, vocab: Vocabulary, out: Analysis) -> None:
    bound = _macro_vars(tree)
    for node in _walk(tree):
        if node.data in ("member_dot", "member_index"):
            path = _path(node)
            if path:
                out.fields.add(path)
        elif node.data == "ident":
            name = str(node.children[0])
            if name != "e" and name not in bound:
                raise ConditionError(f"condition names {name!r}, which is not defined: a condition sees one "
                                     "event, `e` (e.g. e.vcs.branch); see docs/events.md")
        elif node.data == "ident_arg" and str(node.children[0]) not in _FUNCTIONS:
            raise ConditionError(f"condition calls {node.children[0]!s}(), which CEL here does not have")
    for path in sorted(out.fields):
        if not vocab.field_known(path):
            hint = vocab.suggest_field(path)
            raise ConditionError(f"condition names e.{path}, which the event vocabulary does not have"
                                 + (f"; did you mean {hint}?" if hint else "; see docs/events.md"))


def _comparison(node: Any) -> tuple[str, Any, Any] | None:
    """``(op, left, right)`` for a comparison node: lark builds ``relation(relation_<op>(left), right)``."""
    if getattr(node, "data", None) != "relation" or len(node.children) != 2:
        return None
    op = node.children[0]
    if not getattr(op, "data", "").startswith("relation_") or len(op.children) != 1:
        return None
    return op.data.removeprefix("relation_"), op.children[0], node.children[1]


def _action_literals(node: Any) -> tuple[Keys | None, set[str]]:
    """For a comparison of ``e.event.action`` with literals: the keys it allows and the names it uses."""
    data = getattr(node, "data", None)
    compared = _comparison(node)
    if compared and compared[0] in ("eq", "in"):
        data, left, right = compared
        if _path(left) != "event.action":
            left, right = right, left
        if _path(left) != "event.action":
            return None, set()
        if data == "eq":
            ok, value = _literal(right)
            return (Keys(frozenset([value])), {value}) if ok and isinstance(value, str) else (None, set())
        items = _unwrap(right)
        if getattr(items, "data", None) == "list_lit" and items.children:
            values = [_literal(c) for c in items.children[0].children]
            if all(ok and isinstance(v, str) for ok, v in values):
                names = {v for _, v in values}
                return Keys(frozenset(names)), names
        return None, set()
    if data == "member_dot_arg" and str(node.children[1]) == "startsWith" and _path(node.children[0]) == "event.action":
        args = node.children[2].children if len(node.children) > 2 else []
        ok, value = _literal(args[0]) if len(args) == 1 else (False, None)
        if ok and isinstance(value, str):
            return Keys(frozenset(), frozenset([value])), set()
    return None, set()


def _keys(node: Any) -> Keys:
    """A sound over-approximation of the actions ``node`` can be true for."""
    node = _unwrap(node)
    data = getattr(node, "data", None)
    if data == "conditionalor" and len(node.children) == 2:
        a, b = _keys(node.children[0]), _keys(node.children[1])
        if a.any or b.any:
            return Keys()
        assert a.exact is not None and b.exact is not None
        return Keys(a.exact | b.exact, a.prefixes | b.prefixes)
    if data == "conditionaland" and len(node.children) == 2:
        a, b = _keys(node.children[0]), _keys(node.children[1])
        if a.any:
            return b
        if b.any or len(a.exact or ()) + len(a.prefixes) <= len(b.exact or ()) + len(b.prefixes):
            return a
        return b
    found, _ = _action_literals(node)
    return found or Keys()


def _conjuncts(node: Any) -> list[Any]:
    node = _unwrap(node)
    if getattr(node, "data", None) == "conditionaland" and len(node.children) == 2:
        return _conjuncts(node.children[0]) + _conjuncts(node.children[1])
    return [node]


def _equalities(tree: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for term in _conjuncts(tree):
        compared = _comparison(term)
        if not compared or compared[0] != "eq":
            continue
        _, left, right = compared
        path, (ok, value) = _path(left), _literal(right)
        if path is None:
            path, (ok, value) = _path(right), _literal(left)
        if path and path != "event.action" and ok and isinstance(value, str | int | bool):
            out.setdefault(path, value)
    return out


def _check_actions(tree: Any, vocab: Vocabulary, out: Analysis) -> None:
    for node in _walk(tree):
        _, names = _action_literals(node)
        out.actions |= names
    for name in sorted(out.actions):
        if vocab.action(name) is None:
            hint = vocab.suggest_action(name)
            raise ConditionError(f"condition waits for event action {name!r}, which the vocabulary does not "
                                 "have" + (f"; did you mean {hint!r}?" if hint else "; see docs/events.md"))


def _parse(text: str) -> Any:
    from celpy.celparser import CELParseError

    if not isinstance(text, str) or not text.strip():
        raise ConditionError("the condition is empty: write CEL over the event `e`, e.g. "
                             "e.event.action == \"vcs.merged\" && e.vcs.branch == \"auth-rotation\"")
    if len(text) > MAX_CONDITION:
        raise ConditionError(f"the condition is {len(text)} characters, over the {MAX_CONDITION} limit")
    try:
        return _env().compile(text)
    except CELParseError as exc:
        raise ConditionError(f"the condition does not parse: {_near(text, exc)}; see docs/events.md") from None
    except RecursionError:
        raise ConditionError("the condition is nested too deeply to parse") from None


def _near(text: str, exc: Exception) -> str:
    """Where parsing stopped, on one line: ``line 1, column 16: e.event.action == ⟨here⟩``."""
    line, column = getattr(exc, "line", None), getattr(exc, "column", None)
    if not line or not column:
        return "syntax error"
    row = text.splitlines()[line - 1] if line <= len(text.splitlines()) else text
    before, after = row[max(0, column - 41):column - 1], row[column - 1:column + 19]
    return f"line {line}, column {column}: {before}⟨here⟩{after}"


def analyse(text: str) -> Analysis:
    """Check ``text`` against the vocabulary and the cost limit; return what dispatch and costing need.

    Raises:
        ConditionError: with the reason (a parse error, an unknown field or action, too costly).
    """
    return compile_condition(text).analysis


@lru_cache(maxsize=8192)
def compile_condition(text: str) -> Compiled:
    """The compiled program for ``text``, cached per process (compiling costs about a millisecond).

    A refused condition is not cached: ``lru_cache`` keeps only returned values.

    Raises:
        ConditionError: with the reason (a parse error, an unknown field or action, too costly).
    """
    vocab = load()
    tree = _parse(text)
    out = Analysis()
    _check_names(tree, vocab, out)
    _check_actions(tree, vocab, out)
    out.keys = _keys(tree)
    out.equalities = _equalities(tree)
    out.size = sum(1 for _ in _walk(tree))
    out.depth = _depth(tree)
    bound = out.cost(MAX_LIST)
    if bound > COST_LIMIT:
        raise ConditionError(f"the condition could cost {bound:,} units on one event, over the {COST_LIMIT:,} "
                             "limit: nest fewer comprehensions (all, exists, map, filter)")
    try:
        program = _env().program(tree)
    except Exception as exc:  # celpy's transpiler refuses some valid-looking trees
        raise ConditionError(f"the condition cannot be compiled: {exc}") from None
    return Compiled(text, program, out)


class Outcome(NamedTuple):
    matched: bool
    error: str | None = None  # set when the evaluation failed: never a match


NO_MATCH = Outcome(False)


def _missing_member(exc: Exception) -> bool:
    """celpy wraps every failure as ``CELEvalError('evaluation error', type, args)``; find a missing key."""
    args = exc.args
    inner = args[2] if len(args) > 2 and isinstance(args[2], tuple) else args
    return any(isinstance(a, str) and a.startswith("no such member") for a in inner) or (
        len(inner) > 1 and inner[1] is KeyError)


def _error_text(exc: Exception) -> str:
    args = exc.args
    inner = args[2] if len(args) > 2 and isinstance(args[2], tuple) else args
    first = next((a for a in inner if isinstance(a, str)), type(exc).__name__)
    return " ".join(first.split())[:200]


def evaluate(compiled: Compiled, cel_event: Any, longest: int) -> Outcome:
    """Evaluate on one event already converted with ``celpy.adapter.json_to_cel`` (``longest``: its longest list)."""
    from celpy.celtypes import BoolType
    from celpy.evaluation import CELEvalError

    cost = compiled.analysis.cost(longest)
    if cost > COST_LIMIT:
        return Outcome(False, f"over the cost limit ({cost:,} > {COST_LIMIT:,} units)")
    try:
        value = compiled.program.evaluate({"e": cel_event})
    except CELEvalError as exc:
        return NO_MATCH if _missing_member(exc) else Outcome(False, _error_text(exc))
    except (RecursionError, MemoryError, ValueError, TypeError, ArithmeticError) as exc:
        return Outcome(False, f"{type(exc).__name__}: {str(exc)[:120]}")
    if not isinstance(value, BoolType):
        return Outcome(False, f"the condition gave {type(value).__name__}, not true or false")
    return Outcome(bool(value))


class Dispatch:
    """Conditions indexed by the actions they can match and one literal equality each, for cheap events.

    ``action -> path -> value -> keys``: an event looks up each indexed path's value once, so its cost grows with
    the conditions that could match it, not with the number of distinct values conditions wait for.
    """

    def __init__(self) -> None:
        self._exact: dict[str, dict[str | None, dict[Any, list[str]]]] = {}
        self._prefix: list[tuple[str, str]] = []
        self._any: list[str] = []
        self._needs: dict[str, dict[str, Any]] = {}

    def add(self, key: str, analysis: Analysis) -> None:
        path, value = next(iter(analysis.equalities.items()), (None, None))
        self._needs[key] = analysis.equalities
        if analysis.keys.any:
            self._any.append(key)
            return
        for action in analysis.keys.exact or ():
            self._exact.setdefault(action, {}).setdefault(path, {}).setdefault(_hashable(value), []).append(key)
        self._prefix += [(prefix, key) for prefix in analysis.keys.prefixes]

    def __len__(self) -> int:
        return len(self._needs)

    def candidates(self, action: str, value_of: Any) -> list[str]:
        """Keys whose action set admits ``action`` and whose equalities the event meets (``value_of(path)``)."""
        found: list[str] = []
        for path, by_value in self._exact.get(action, {}).items():
            if path is None:
                found += by_value[None]
            else:
                found += by_value.get(_hashable(value_of(path)), ())
        found += [key for prefix, key in self._prefix if action.startswith(prefix)]
        found += self._any
        return [k for k in dict.fromkeys(found)
                if all(value_of(p) == v for p, v in self._needs[k].items())]


def _hashable(value: Any) -> Any:
    """Event values may be lists or maps: those never equal a literal, so they index as nothing."""
    return value if isinstance(value, str | int | bool) or value is None else ("unhashable", id(value))
