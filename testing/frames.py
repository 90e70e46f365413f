"""The tests' own idea of "reads as a frame tag", independent of ``gitive.capture.framing``.

A reader that decodes what a model might decode (HTML character references, also double-encoded; backslash
escapes; percent-encoding), applies NFKC, drops invisible characters and combining marks, reads every
look-alike opening bracket as ``<`` and closing one as ``>``, folds look-alike letters to ASCII and undoes
leetspeak, then looks for ``<`` followed by an optional ``/`` and a word that spells ``team-memory`` or
``team-message``. Look-alikes come from Unicode's data directly (categories, names and decompositions in
``unicodedata``, confusables as ``confusable-homoglyphs`` packages them), not from gitive's generated tables.
"""

from __future__ import annotations

import functools
import html
import json
import re
import sys
import unicodedata
from importlib import resources
from urllib.parse import unquote

LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "@": "a", "5": "s", "$": "s", "7": "t", "|": "i",
                      "!": "i", "+": "t"})
_TAG = re.compile(r"<\s*(/?)\s*([^\s<>]{1,80})")
_ESCAPE = re.compile(r"\\(?:u\{([0-9a-fA-F]{1,6})\}|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|x([0-9a-fA-F]{2})|([0-7]{3}))")
_OPEN_WORDS = ("LESS-THAN", "LEFT-POINTING", "LEFT ANGLE", "LEFT ARROWHEAD")
_CLOSE_WORDS = ("GREATER-THAN", "RIGHT-POINTING", "RIGHT ANGLE", "RIGHT ARROWHEAD")


@functools.cache
def _graph() -> dict[str, set[str]]:
    text = resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text(encoding="utf-8")
    graph: dict[str, set[str]] = {}
    for key, items in json.loads(text).items():
        for item in items:
            if len(key) == 1 and len(item["c"]) == 1:
                graph.setdefault(key, set()).add(item["c"])
                graph.setdefault(item["c"], set()).add(key)
    return graph


def _grow(seeds: set[str]) -> set[str]:
    found, todo = set(seeds), list(seeds)
    while todo:
        for other in _graph().get(todo.pop(), ()):
            if other not in found and not other.isascii():
                found.add(other)
                todo.append(other)
    return found


@functools.cache
def brackets() -> tuple[frozenset[str], frozenset[str]]:
    """(openers, closers): every character a reader may take for ``<`` or ``>``."""
    opens, closes = {"<"}, {">"}
    for i in range(sys.maxunicode + 1):
        c = chr(i)
        category, name = unicodedata.category(c), unicodedata.name(c, "")
        if category in ("Mn", "Me", "Cf", "Cn", "Cs", "Co"):
            continue
        head = unicodedata.normalize("NFKD", c)[:1]
        if not c.isascii() and (category in ("Ps", "Pi") or any(w in name for w in _OPEN_WORDS) or head == "<"):
            opens.add(c)
        elif not c.isascii() and (category in ("Pe", "Pf") or any(w in name for w in _CLOSE_WORDS)
                                  or head == ">"):
            closes.add(c)
    opens, closes = _grow(opens), _grow(closes)
    return frozenset(opens), frozenset(closes - opens)


@functools.cache
def _letters() -> dict[int, str]:
    """Look-alike letters and digits to the ASCII ones they imitate."""
    out: dict[int, str] = {}
    for ascii_char in "abcdefghijklmnopqrstuvwxyz0123456789-/":
        for variant in (ascii_char, ascii_char.upper()):
            for other in _graph().get(variant, ()):
                out.setdefault(ord(other), ascii_char)
    return out


def _unescape(match: re.Match[str]) -> str:
    digits = next(g for g in match.groups() if g)
    code = int(digits, 8 if match.group(5) else 16)
    return chr(code) if code <= sys.maxunicode and not 0xD800 <= code <= 0xDFFF else match.group(0)


def decode(text: str) -> str:
    """What a model might read ``text`` as once references, escapes and percent-encoding are undone."""
    for _ in range(4):
        before = text
        text = unquote(_ESCAPE.sub(_unescape, html.unescape(text)))
        if text == before:
            break
    return text


def frame_tags(text: str) -> list[tuple[str, str]]:
    """``("open"|"close", name)`` for every frame tag a reader could take ``text`` to contain."""
    opens, closes = brackets()
    folded = unicodedata.normalize("NFKC", decode(text))
    read = "".join("<" if c in opens else ">" if c in closes else c for c in folded
                   if unicodedata.category(c) != "Cf")
    found = []
    for slash, word in _TAG.findall(read):
        bare = "".join(c for c in unicodedata.normalize("NFD", word) if unicodedata.category(c) not in ("Mn", "Me"))
        letters = "".join(c for c in bare.translate(_letters()).lower().translate(LEET) if c.isalpha())
        for name in ("teammemory", "teammessage"):
            if letters.startswith(name):
                found.append(("close" if slash else "open", name))
    return found
