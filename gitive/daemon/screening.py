"""Screening inbound messages with injection rules: YAML files whose CEL condition reads the message as ``m``.

A rule matching a message holds it for the recipient's person. This is a speed bump, not a wall: someone who
reads the rules can word around them. The main defence is framing and defang (``gitive.capture.framing``),
which keep a teammate's text inside a frame the agent reads as peer input.

The activation is ``m`` with ``body`` (the text as sent), ``lower`` (see ``fold``), ``from`` (the sender's
address), ``from_person`` (typed by a person at a terminal) and ``kind`` (``"message"``). Conditions use CEL's
``matches()`` (RE2 syntax, linear time on any input) and ``contains()``.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from gitive.core.home import gitive_home
from gitive.errors import GitiveError

if TYPE_CHECKING:
    import celpy

log = logging.getLogger(__name__)

RULES_DIR = Path(__file__).parent / "rules"
SEVERITIES = ("hold", "log")  # hold: the message waits for its person; log: reported only (trying a rule out)
RULE_KEYS = {"id": str, "title": str, "severity": str, "condition": str, "examples": dict}
OPTIONAL_KEYS = {"description": str}
EXAMPLE_KEYS = ("match", "no_match")
EXAMPLE_SENDER = "alice/api-claude"
_RULE_ID = re.compile(r"^[a-z0-9][a-z0-9._/-]{0,127}$")


class RuleError(GitiveError):
    """A rule file that cannot be used; the message names the file and what is wrong with it."""

    def __init__(self, path: Path, problem: str) -> None:
        self.path = path
        self.problem = " ".join(problem.split())  # always one line
        super().__init__(f"rule file {path}: {self.problem}")


@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    severity: str
    condition: str
    program: Condition = field(repr=False, compare=False)
    positives: tuple[str | Mapping[str, Any], ...] = ()
    negatives: tuple[str | Mapping[str, Any], ...] = ()
    path: Path | None = None


class Hit(NamedTuple):
    rule: str
    title: str
    severity: str


# --- folding: one lower-case reading of a body that common obfuscations do not change --------------------

# Letters from other scripts that render like Latin ones (after casefold), quotes, dashes and brackets.
_CONFUSABLES = {
    "а": "a", "е": "e", "і": "i", "ј": "j", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "ѕ": "s",
    "һ": "h", "ԁ": "d", "ӏ": "l", "к": "k", "м": "m", "т": "t", "в": "b", "ԛ": "q", "ԝ": "w",
    "α": "a", "ο": "o", "ι": "i", "ε": "e", "ρ": "p", "υ": "u", "κ": "k", "ν": "v", "τ": "t", "χ": "x",
    "ı": "i", "ɡ": "g", "ȷ": "j", "ɑ": "a", "ℓ": "l",
    "‘": "'", "’": "'", "‚": "'", "‛": "'", "′": "'", "‵": "'", "ʼ": "'", "´": "'", "ˈ": "'",
    "“": '"', "”": '"', "„": '"', "‟": '"', "″": '"', "‶": '"', "«": '"', "»": '"',
    "‐": "-", "‑": "-", "‒": "-", "–": "-", "−": "-", "﹘": "-", "⁃": "-",
    "—": "--", "―": "--",  # typographic autocorrect turns "--" into an em dash
    "\u2039": "<", "\u3008": "<", "\u27e8": "<", "\u276c": "<", "\u276e": "<", "\u29fc": "<",
    "\u02c2": "<", "\u1438": "<", "\ufe64": "<",
    "\u203a": ">", "\u3009": ">", "\u27e9": ">", "\u276d": ">", "\u276f": ">", "\u29fd": ">",
    "\u02c3": ">", "\u1433": ">", "\ufe65": ">",
    "\u2028": "\n", "\u2029": "\n",
}
_TRANSLATE = str.maketrans(_CONFUSABLES)
# Invisible characters some fonts render as nothing; Mn/Me/Cf (marks, zero-width, bidi, tags) go by category.
_INVISIBLE = frozenset("\u115f\u1160\u3164\uffa0\u2800\u034f")
_DROP_CATEGORIES = frozenset({"Mn", "Me", "Cf", "Co", "Cn", "Cs"})
_NON_ASCII = re.compile(r"[^\x00-\x7f]+")
_SPACE = re.compile(r"\s+")
_LEET_TOKEN = re.compile(r"(?<![a-z0-9])(?=[a-z0-9]*[a-z])[a-z0-9]*[0-9][a-z0-9]*(?![a-z0-9])")
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t"})


def _strip_invisible(run: re.Match[str]) -> str:
    return "".join(c for c in run.group() if c not in _INVISIBLE and unicodedata.category(c) not in _DROP_CATEGORIES)


def _space(run: re.Match[str]) -> str:
    return "\n" if "\n" in run.group() or "\r" in run.group() else " "


def fold(text: str) -> str:
    """The lower-cased reading of ``text`` that rules match against (``m.lower``).

    NFKC, casefold, combining marks and zero-width/format characters removed, look-alike letters from other
    scripts mapped to Latin, quotes and dashes made ASCII, each run of whitespace one space (or one newline
    when it held a line break), and digits read as letters inside words that also hold letters
    (``1gn0re`` → ``ignore``; ``#123`` and ``8080`` stay).
    """
    text = _utf8(text)
    if not text.isascii():
        text = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", text).casefold())
        text = _NON_ASCII.sub(_strip_invisible, text).translate(_TRANSLATE)
    text = _SPACE.sub(_space, text.lower()).strip()
    return _LEET_TOKEN.sub(lambda token: token.group().translate(_LEET), text)


def _utf8(text: str) -> str:
    """``text`` with lone surrogates (e.g. from a JSON ``"\\ud800"`` escape) replaced: RE2 needs valid UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode("utf-8")
    return text


# --- the message as rules see it ---------------------------------------------------------------------------


def typed_by_person(message: Mapping[str, Any]) -> bool:
    """Whether a person typed this message: flagged so, or sent from a ``person/terminal`` address."""
    sender = message.get("from")
    return message.get("from_person") is True or (isinstance(sender, str) and sender.endswith("/terminal"))


def message_fields(message: Mapping[str, Any]) -> dict[str, Any]:
    """The ``m`` a rule sees; never fails, whatever ``message`` holds."""
    body, sender, kind = (message.get(key) for key in ("body", "from", "kind"))
    body = _utf8(body) if isinstance(body, str) else ""
    return {"body": body, "lower": fold(body), "from": _utf8(sender) if isinstance(sender, str) else "",
            "from_person": typed_by_person(message), "kind": _utf8(kind) if isinstance(kind, str) else "message"}


def example_message(example: str | Mapping[str, Any]) -> dict[str, Any]:
    """A rule example as a message: a string is an agent's message body from ``alice/api-claude``."""
    if isinstance(example, str):
        return {"body": example, "from": EXAMPLE_SENDER, "from_person": False, "kind": "message"}
    return {"from": EXAMPLE_SENDER, "from_person": False, "kind": "message", **example}


# --- CEL ------------------------------------------------------------------------------------------------

# celpy's compiled runner keeps the activation in a module global while it runs, so one evaluation at a time.
_EVAL_LOCK = threading.Lock()


@functools.cache
def _environment() -> celpy.Environment:
    import celpy

    logging.getLogger("celpy").setLevel(logging.CRITICAL)  # it logs every failed evaluation as an error
    # One runner class per process: celpy caches its parser on the class (ECOSYSTEM-NOTES, cel-python 0.5).
    return celpy.Environment(runner_class=celpy.CompiledRunner)


class Condition(NamedTuple):
    """A rule's compiled condition: celpy's runner, and the same condition as plain Python when it can be.

    ``direct`` is set when every part of the condition is one of: ``m.<field>``, a string or bool literal,
    ``matches`` (a constant pattern, compiled once with RE2), ``contains``, ``startsWith``, ``endsWith``, ``==``,
    ``!=``, ``!``, ``&&``, ``||`` and parentheses, each with operands of the types CEL allows there. Such a
    condition cannot fail on the ``m`` that :func:`message_fields` builds, so CEL's commutative ``&&``/``||``
    give the same value as Python's short-circuit ones; RE2 is the engine celpy's ``matches`` uses, with the
    same options. Anything else runs in celpy (``runner``).
    """

    runner: Any  # a compiled celpy Runner
    direct: Callable[[Mapping[str, Any]], bool] | None


@functools.lru_cache(maxsize=256)
def _compile(source: str) -> Condition:
    """A runnable condition for ``source``; raises ``ValueError`` with a one-line reason when it cannot be used."""
    from celpy.celparser import CELParseError

    env = _environment()
    try:
        ast = env.compile(source)
    except CELParseError as exc:
        where = f"line {exc.line}, column {exc.column}" if exc.line else "somewhere"
        line = source.splitlines()[exc.line - 1].strip() if exc.line else ""
        raise ValueError(f"condition does not parse at {where}: {line[:80]!r}") from None
    _check_patterns(ast)
    return Condition(env.program(ast), _direct(ast))


# --- the direct evaluator (see Condition) ---------------------------------------------------------------

# The type of each field of ``m`` (message_fields never gives another).
_FIELD_TYPES: dict[str, type] = {"body": str, "lower": str, "from": str, "from_person": bool, "kind": str}
_STRING_METHODS = frozenset({"matches", "contains", "startsWith", "endsWith"})
_Fn = Callable[[Mapping[str, Any]], Any]


class _Unsupported(Exception):
    """A part of a condition the direct evaluator leaves to celpy."""


def _direct(ast: Any) -> Callable[[Mapping[str, Any]], bool] | None:
    """``ast`` as a Python function of ``m``'s fields, or None when any part of it is outside the subset."""
    try:
        fn, kind = _node(ast)
    except _Unsupported:
        return None
    return fn if kind is bool else None


def _node(tree: Any) -> tuple[_Fn, type]:
    from lark import Tree

    data, children = tree.data, tree.children
    if data in ("conditionalor", "conditionaland") and len(children) == 2:
        return _logical(tree)
    if data == "relation" and len(children) == 2:
        return _relation(children[0], children[1])
    if data == "unary" and len(children) == 2:
        op, operand = children
        fn, kind = _node(operand)
        if not (isinstance(op, Tree) and op.data == "unary_not") or kind is not bool:
            raise _Unsupported
        return (lambda m: not fn(m)), bool
    if data == "member_dot":
        return _field(tree)
    if data == "member_dot_arg":
        return _method(tree)
    if data == "literal":
        return _literal(children[0])
    if len(children) == 1 and isinstance(children[0], Tree) and data in (
            "expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication", "unary", "member",
            "primary", "paren_expr"):
        return _node(children[0])
    raise _Unsupported


def _logical(tree: Any) -> tuple[_Fn, type]:
    """``a || b || c`` (or ``&&``) as one loop over its operands, all of them bool."""
    data, operands = tree.data, []
    while tree.data == data and len(tree.children) == 2:  # the grammar nests to the left
        operands.append(tree.children[1])
        tree = tree.children[0]
    operands.append(tree)
    fns = []
    for operand in reversed(operands):
        fn, kind = _node(operand)
        if kind is not bool:
            raise _Unsupported
        fns.append(fn)
    chain = tuple(fns)
    if data == "conditionalor":
        return (lambda m: any(f(m) for f in chain)), bool
    return (lambda m: all(f(m) for f in chain)), bool


def _relation(op_tree: Any, right: Any) -> tuple[_Fn, type]:
    from lark import Tree

    if not isinstance(op_tree, Tree) or op_tree.data not in ("relation_eq", "relation_ne"):
        raise _Unsupported
    left_fn, left_kind = _node(op_tree.children[0])
    right_fn, right_kind = _node(right)
    if left_kind is not right_kind:
        raise _Unsupported
    if op_tree.data == "relation_eq":
        return (lambda m: left_fn(m) == right_fn(m)), bool
    return (lambda m: left_fn(m) != right_fn(m)), bool


def _field(tree: Any) -> tuple[_Fn, type]:
    base, name = tree.children
    if _ident(base) != "m" or str(name) not in _FIELD_TYPES:
        raise _Unsupported
    key = str(name)
    return (lambda m: m[key]), _FIELD_TYPES[key]


def _ident(tree: Any) -> str | None:
    """The name when ``tree`` is a bare identifier (``member > primary > ident``)."""
    from lark import Tree

    while isinstance(tree, Tree) and tree.data in ("member", "primary") and len(tree.children) == 1:
        tree = tree.children[0]
    if isinstance(tree, Tree) and tree.data == "ident" and len(tree.children) == 1:
        return str(tree.children[0])
    return None


def _method(tree: Any) -> tuple[_Fn, type]:
    import re2

    if len(tree.children) != 3:
        raise _Unsupported
    target, name, args = tree.children
    if str(name) not in _STRING_METHODS or len(args.children) != 1:
        raise _Unsupported
    text_fn, kind = _node(target)
    argument = _constant_string(args.children[0])
    if kind is not str or argument is None:
        raise _Unsupported
    if name == "matches":
        search = re2.compile(argument).search  # the options re2.search uses in celpy's function_matches
        return (lambda m: search(text_fn(m)) is not None), bool
    if name == "contains":
        return (lambda m: argument in text_fn(m)), bool
    if name == "startsWith":
        return (lambda m: text_fn(m).startswith(argument)), bool
    return (lambda m: text_fn(m).endswith(argument)), bool


def _literal(token: Any) -> tuple[_Fn, type]:
    from celpy.evaluation import celstr

    if token.type == "BOOL_LIT":
        value = str(token) == "true"
        return (lambda m: value), bool
    if token.type in ("STRING_LIT", "MLSTRING_LIT"):
        text = str(celstr(token))
        return (lambda m: text), str
    raise _Unsupported


# Tree nodes that may wrap a pattern made of string literals joined by ``+``.
_LITERAL_WRAPPERS = frozenset({"expr", "conditionalor", "conditionaland", "relation", "addition", "addition_add",
                               "multiplication", "unary", "member", "primary", "literal"})


def _check_patterns(ast: Any) -> None:
    """Every constant ``matches()`` pattern must be valid RE2 (checked here, quietly, not at the first message).

    A pattern may be one string literal or literals joined by ``+`` (how rules keep long patterns readable).
    """
    import re2
    from lark import Token, Tree

    options = re2.Options()
    options.log_errors = False  # RE2 would print a C++ log line on stderr for each bad pattern
    for node in ast.iter_subtrees():
        if node.data not in ("member_dot_arg", "ident_arg"):
            continue
        name = next((c for c in node.children if isinstance(c, Token)), None)
        args = next((c for c in node.children if isinstance(c, Tree) and c.data == "exprlist"), None)
        if name != "matches" or args is None or not args.children:
            continue
        pattern = _constant_string(args.children[-1])
        if pattern is None:
            continue
        try:
            re2.compile(pattern, options)
        except re2.error as exc:
            reason = exc.args[0] if exc.args else exc
            reason = reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)
            raise ValueError(f"pattern {_excerpt(pattern)!r} is not valid RE2: {reason}") from None


def _constant_string(tree: Any) -> str | None:
    from celpy.evaluation import celstr
    from lark import Token

    if any(sub.data not in _LITERAL_WRAPPERS for sub in tree.iter_subtrees()):
        return None
    tokens = list(tree.scan_values(lambda v: isinstance(v, Token)))
    if not tokens or any(t.type not in ("STRING_LIT", "MLSTRING_LIT") for t in tokens):
        return None
    return "".join(str(celstr(t)) for t in tokens)


def _evaluate(condition: Condition, fields: Mapping[str, Any], activation: dict[str, Any] | None = None) -> bool:
    """True or False for ``m`` = ``fields`` (:func:`message_fields`), or raises ``ValueError`` naming what went
    wrong. ``activation`` is celpy's form of the same fields, when the caller already has it."""
    if condition.direct is not None:
        return condition.direct(fields)
    return _run_cel(condition.runner, activation if activation is not None else _cel_activation(fields))


def _run_cel(program: Any, activation: dict[str, Any]) -> bool:
    from celpy.celtypes import BoolType
    from celpy.evaluation import CELEvalError

    with _EVAL_LOCK:
        try:
            value = program.evaluate(activation)
        except CELEvalError as exc:
            raise ValueError(f"condition fails: {_eval_reason(exc)}") from None
        except Exception as exc:  # CELUnsupportedError, or a celpy bug: a rule must never stop delivery
            raise ValueError(f"condition fails: {type(exc).__name__}: {exc}") from None
    if not isinstance(value, BoolType):
        raise ValueError(f"condition gives {type(value).__name__}, not true or false")
    return bool(value)


def _eval_reason(exc: BaseException) -> str:
    # CELEvalError nests (message, type, args) tuples; the innermost message says what happened.
    args: Any = exc.args
    while _nested(args[2] if len(args) == 3 else None):
        args = args[2]
    if not args:
        return str(exc)
    reason = str(args[0])
    detail = args[2] if len(args) == 3 and isinstance(args[2], tuple) else ()
    if detail and str(detail[0]) not in reason:
        reason += f": {detail[0]}"
    return reason


def _nested(args: Any) -> bool:
    return isinstance(args, tuple) and len(args) == 3 and isinstance(args[1], type)


def _cel_activation(fields: Mapping[str, Any]) -> dict[str, Any]:
    import celpy

    return {"m": celpy.adapter.json_to_cel(dict(fields))}


# --- loading --------------------------------------------------------------------------------------------


def user_rules_dir() -> Path:
    """Where a person's own rules live: ``$GITIVE_HOME/rules/``."""
    return gitive_home() / "rules"


def load_rules(paths: Sequence[Path] | None = None) -> list[Rule]:
    """The shipped starter rules, then the rules in ``paths`` (default: ``$GITIVE_HOME/rules/`` if present).

    Each path is a directory of ``*.yaml``/``*.yml`` files or one file; a missing path is skipped. A rule in a
    later path replaces a shipped one with the same id (so a person can reword or switch off a noisy rule).
    Every rule is checked against its own examples while loading.

    Raises:
        RuleError: a file is not valid YAML, misses a key, does not compile, or its examples disagree.
    """
    sources = [RULES_DIR, *(paths if paths is not None else [user_rules_dir()])]
    rules: dict[str, Rule] = {}
    for source in sources:
        defined_here: dict[str, Path] = {}
        for path in _rule_files(Path(source)):
            rule = load_rule(path)
            if rule.id in defined_here:
                raise RuleError(path, f"rule id {rule.id!r} is already defined in {defined_here[rule.id].name}")
            defined_here[rule.id] = path
            rules[rule.id] = rule
    return list(rules.values())


def _rule_files(source: Path) -> list[Path]:
    if source.is_file():
        return [source]
    if not source.is_dir():
        return []
    return sorted(p for p in source.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())


def load_rule(path: Path) -> Rule:
    """One rule file, compiled and checked against its examples.

    Raises:
        RuleError: anything wrong with the file, in one line.
    """
    return _load_rule(path, _read_text(path))


@functools.lru_cache(maxsize=128)
def _load_rule(path: Path, text: str) -> Rule:
    """The rule ``text`` (read from ``path``) defines. Parsing the YAML and checking the examples cost tens of
    milliseconds a rule, and the anchor's gate loads the rules every tick, so the result is kept per path and
    exact text: an edited file is loaded again, an unchanged one costs its read, and its unknown keys are
    warned about once. A file that fails raises every time (exceptions are not cached)."""
    data = _read_yaml(path, text)
    for key, kind in RULE_KEYS.items():
        if key not in data:
            raise RuleError(path, f"missing key {key!r}")
        if not isinstance(data[key], kind):
            raise RuleError(path, f"{key!r} must be a {_KIND_NAMES[kind]}, not {type(data[key]).__name__}")
    for key in sorted(set(data) - set(RULE_KEYS) - set(OPTIONAL_KEYS)):
        log.warning("rule file %s: unknown key %r ignored", path, key)
    if not _RULE_ID.match(data["id"]):
        raise RuleError(path, f"id {data['id']!r} must be lower-case letters, digits and . _ / - (at most 128)")
    if data["severity"] not in SEVERITIES:
        raise RuleError(path, f"severity must be one of {', '.join(SEVERITIES)}, not {data['severity']!r}")
    positives, negatives = (_examples(path, data["examples"], key) for key in EXAMPLE_KEYS)
    try:
        program = _compile(data["condition"])
    except ValueError as exc:
        raise RuleError(path, str(exc)) from None
    rule = Rule(id=data["id"], title=" ".join(data["title"].split()), severity=data["severity"],
                condition=data["condition"], program=program, positives=positives, negatives=negatives,
                path=path)
    problems = check_examples(rule)
    if problems:
        raise RuleError(path, problems[0])
    return rule


_KIND_NAMES = {str: "string", dict: "mapping", list: "list"}


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise RuleError(path, f"cannot be read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise RuleError(path, "is not UTF-8 text") from None


def _read_yaml(path: Path, text: str) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise RuleError(path, f"is not valid YAML{where}: {getattr(exc, 'problem', None) or exc}") from None
    if not isinstance(data, dict):
        raise RuleError(path, "must be a YAML mapping with id, title, severity, condition and examples")
    return data


def _examples(path: Path, examples: dict[str, Any], key: str) -> tuple[str | Mapping[str, Any], ...]:
    unknown = sorted(set(examples) - set(EXAMPLE_KEYS))
    if unknown:
        raise RuleError(path, f"examples has unknown key {unknown[0]!r} (use match and no_match)")
    items = examples.get(key)
    if not isinstance(items, list) or not items:
        raise RuleError(path, f"examples.{key} must be a list of at least one message")
    for n, item in enumerate(items, 1):
        body = item.get("body") if isinstance(item, dict) else item
        if not isinstance(body, str):
            raise RuleError(path, f"examples.{key} #{n} must be a string or a mapping with a string body")
    return tuple(items)


def check_examples(rule: Rule) -> list[str]:
    """What is wrong with the rule against its own examples: one line per problem, empty when all agree."""
    problems = []
    for key, examples, expected in (("match", rule.positives, True), ("no_match", rule.negatives, False)):
        for n, example in enumerate(examples, 1):
            try:
                got = _evaluate(rule.program, message_fields(example_message(example)))
            except ValueError as exc:
                problems.append(f"examples.{key} #{n}: {exc}")
                continue
            if got != expected:
                verb = "does not match" if expected else "matches"
                problems.append(f"examples.{key} #{n} {verb}: {_excerpt(example)!r}")
    return problems


def _excerpt(example: str | Mapping[str, Any]) -> str:
    body = example if isinstance(example, str) else str(example.get("body", ""))
    return body if len(body) <= 60 else body[:57] + "..."


# --- screening ------------------------------------------------------------------------------------------


def screen(message: Mapping[str, Any], rules: Sequence[Rule]) -> list[Hit]:
    """The rules ``message`` matches, in rule order. Never raises: a rule that fails on it is logged, not hit."""
    if not rules:
        return []
    fields = message_fields(message)
    activation = None  # celpy's form of the fields, made for the first rule that needs celpy
    hits = []
    for rule in rules:
        try:
            if rule.program.direct is None and activation is None:
                activation = _cel_activation(fields)
            matched = _evaluate(rule.program, fields, activation)
        except ValueError as exc:
            log.warning("rule %s: %s", rule.id, exc)
            continue
        if matched:
            hits.append(Hit(rule.id, rule.title, rule.severity))
    return hits
