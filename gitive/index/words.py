"""Words for search, on both sides: what a question asks for and what a lesson's text is indexed as (stdlib only).

FTS5's ``unicode61`` tokenizer splits on every character that is not a letter or a digit, so ``snake_case``,
dotted names and paths already fall apart into words; ``camelCase`` and ``HTTPServer`` do not. Identifiers are
therefore split here, on both sides: a question's ``fetchUserProfile`` also asks for ``fetch``, ``user`` and
``profile``, and a lesson mentioning ``compareServerDefault`` is also indexed under ``compare``, ``server`` and
``default``. Nothing here costs a model call; the hook imports it, so it must stay standard-library only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MAX_TOKENS = 32

# Words that carry no topic in a question an agent types; dropping them keeps BM25 on the words that matter.
STOP_WORDS = frozenset((
    "a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are", "as",
    "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can",
    "cannot", "could", "did", "do", "does", "doing", "don", "done", "down", "during", "each", "even", "ever",
    "every", "few", "for", "from", "further", "get", "gets", "getting", "got", "had", "has", "have",
    "having", "he", "her", "here", "hers", "him", "his", "how", "i", "if", "in", "into", "is", "isn", "it",
    "its", "itself", "just", "let", "lets", "like", "make", "me", "might", "more", "most", "much", "must",
    "my", "myself", "need", "needs", "no", "nor", "not", "now", "of", "off", "on", "once", "one", "ones",
    "only", "or", "other", "ought", "our", "ours", "out", "over", "own", "per", "please", "same", "see",
    "seem", "seems", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them",
    "then", "there", "these", "they", "this", "those", "through", "to", "too", "try", "trying", "under",
    "until", "up", "us", "use", "used", "using", "very", "want", "was", "way", "we", "were", "what", "whats",
    "when", "where", "which", "while", "who", "whom", "why", "will", "with", "within", "without", "would",
    "yet", "you", "your", "yours", "im", "ive", "going", "keep", "keeps", "thing", "things", "anything",
    "something", "still", "again", "really", "currently", "right", "ok", "okay", "hey", "there's",
))

# Abbreviations developers type for words lessons tend to spell out (prefix matching covers "config" ->
# "configuration" and "auth" -> "authentication"; these are not prefixes of their long form).
ABBREVIATIONS = {
    "db": "database", "dbs": "databases", "k8s": "kubernetes", "deps": "dependencies", "dep": "dependency",
    "js": "javascript", "ts": "typescript", "tz": "timezone", "msg": "message", "pw": "password",
    "pwd": "password", "creds": "credentials", "perf": "performance", "gh": "github", "ws": "websocket",
    "repo": "repository", "env": "environment", "auth": "authentication", "img": "image", "pkg": "package",
}

# The first words of a question worded as the task rather than as a symptom ("add a column to orders").
TASK_VERBS = frozenset((
    "add", "adding", "implement", "implementing", "create", "creating", "build", "building", "write",
    "writing", "refactor", "refactoring", "migrate", "migrating", "upgrade", "upgrading", "update",
    "updating", "remove", "removing", "rename", "renaming", "change", "changing", "introduce", "enable",
    "configure", "port", "move", "moving", "wire", "integrate", "bump", "switch", "support", "set", "setup",
    "extend", "expose", "ship", "release", "deploy", "deploying", "replace", "split", "convert", "delete",
    "drop", "start", "starting", "task", "ticket", "feature", "new", "plan", "planning", "prepare",
))
_TASK_LEADS = re.compile(
    r"^\s*(?:(?:i'?m|i am|we'?re|we are)\s+(?:about to|going to|gonna)|(?:i|we)\s+(?:need|have|want)\s+to|"
    r"(?:i'?ll|we'?ll|let'?s)|task:|ticket:|how\s+(?:do|should|would|can)\s+(?:i|we)|how to|"
    r"what'?s the (?:right|best) way to|before (?:i|we))\b", re.IGNORECASE)
_SYMPTOM_MARKS = re.compile(
    r"error|exception|traceback|fail|fails|failed|failing|broken|breaks|crash|wrong|hangs|timeout|timed out|"
    r"flaky|refused|denied|missing|cannot|can't|won't|doesn't|isn't|why|warning|panic|segfault|\bexit\b|"
    r"\b\d{3}\b|not found|unexpected", re.IGNORECASE)

_WORD = re.compile(r"[^\W_]+")  # what FTS5's unicode61 tokenizer calls a token: letters and digits
_IDENT = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def split_identifier(word: str) -> list[str]:
    """The parts of a camelCase or PascalCase identifier, lower-cased (``[]`` when it has only one part).

    ``HTTPServerError`` -> ``http server error``; ``parseJSON2`` -> ``parse json 2``; ``plain`` -> ``[]``.
    """
    parts = _CAMEL.findall(word)
    return [p.lower() for p in parts] if len(parts) > 1 else []


def identifier_parts(text: str) -> list[str]:
    """Every part of every camelCase identifier in ``text``, each once, in order (what an index adds)."""
    seen: dict[str, None] = {}
    for ident in _IDENT.findall(text):
        if ident.islower() or ident.isupper():
            continue
        for part in split_identifier(ident):
            seen.setdefault(part, None)
    return list(seen)


def indexed(text: str) -> str:
    """``text`` as the index stores it: unchanged, then the parts of its identifiers, so both match."""
    parts = identifier_parts(text)
    return f"{text}\n{' '.join(parts)}" if parts else text


def tokens(query: str, limit: int = MAX_TOKENS) -> list[str]:
    """The words of ``query`` worth searching for: lower-cased, stop words dropped, each once, in order.

    Identifiers also give their parts (``fakeInitial`` -> ``fakeinitial``, ``fake``, ``initial``).
    """
    seen: dict[str, None] = {}
    for raw in _WORD.findall(query):
        for word in (raw.lower(), *split_identifier(raw)):
            if len(word) > 1 and word not in STOP_WORDS:
                seen.setdefault(word[:64], None)
    return list(seen)[:limit]


def task_shaped(query: str) -> bool:
    """Is ``query`` worded as a task to start ("add X", "I need to …") rather than as a symptom?

    A task-shaped question is matched against what lessons say about *when they apply* more than against
    their text, which describes the problem as it was met.
    """
    if _SYMPTOM_MARKS.search(query):
        return False
    if _TASK_LEADS.search(query):
        return True
    first = next(iter(_WORD.findall(query.lower())), "")
    return first in TASK_VERBS


def path_words(paths: Iterable[str]) -> str:
    """Paths as indexed words: every component, and the parts of camelCase file names."""
    return indexed(" ".join(paths))
