r"""Frames around what gitive puts in front of an agent, and the defang that keeps stored text inside them.

Every injected lesson is one ``<team-memory …>`` frame and every message one ``<team-message …>`` frame.
Attribute values are escaped so they cannot close the attribute or the tag, and bodies are defanged: an
opening bracket whose tag word reads as ``team-memory``/``team-message`` becomes ``[``. So no stored text can
open or close a frame (``hive-overview.md`` part 1 §10).

"Opening bracket" is read widely, from Unicode's own data (:mod:`gitive.capture.lookalikes`): ``<`` and all
that looks like or decomposes into it (``≮``, ``⊲``, ``＜``), every other opening bracket or quotation mark
outside ASCII (``〔``, ``❨``, ``“``), and any of these spelled as an HTML character reference (``&lt;``,
``&#x3c;``, ``&amp;lt;``), a backslash escape (``\u003c``, ``\x3c``) or percent-encoding (``%3C``); for a
spelled bracket its first character (``&``, ``\``, ``%``) becomes ``[``. The tag word is read as a reader
would: decomposed, marks and invisible characters dropped, look-alike letters folded to the ASCII they imitate,
leetspeak undone. After a plain ``<``, any word that is not plain ASCII, or runs long, counts as an attempt too.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import unquote

from gitive.capture import lookalikes

BRACKETS = lookalikes.ANGLES + lookalikes.OPENERS  # every character defang may turn into "["
_PLAIN = frozenset(c for c in lookalikes.ANGLES if unicodedata.normalize("NFKC", c) == "<")  # "<", "＜", "﹤"
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "@": "a", "5": "s", "$": "s", "7": "t",
                       "|": "i", "!": "i", "+": "t"})
_WORDS = ("teammemory", "teammessage", "team", "memory", "message")
_ENTITY = (r"&(?:amp;)*(?:#(?:[xX]0*(?P<hex>[0-9a-fA-F]{1,6})|0*(?P<dec>[0-9]{1,7}))"
           r"|(?P<name>" + "|".join(sorted(lookalikes.ENTITIES, key=len, reverse=True)) + "));?")
_ESCAPE = (r"\\(?:u\{0*(?P<brace>[0-9a-fA-F]{1,6})\}|u(?P<u4>[0-9a-fA-F]{4})|U(?P<u8>[0-9a-fA-F]{8})"
           r"|x(?P<x2>[0-9a-fA-F]{2})|(?P<oct>[0-7]{3}))")
_PERCENT = r"(?P<pct>(?:%(?:25)*[0-9a-fA-F]{2}){1,4})"
# Spellings of the characters a tag word is made of (inside the word, any character may be spelled).
_SPELLED_CHAR = (r"&(?:amp;)*#(?:[xX]0*(?P<hex>[0-9a-fA-F]{1,6})|0*(?P<dec>[0-9]{1,7}));?|" + _ESCAPE
                 + r"|%(?P<pc>[0-9a-fA-F]{2})|&(?P<named>sol|bsol|hyphen|dash|lowbar|period);")
_NAMED = {"sol": "/", "bsol": "\\", "hyphen": "-", "dash": "-", "lowbar": "_", "period": "."}
_TAG_AFTER = r"\s*[/\\]?\s*([^\s>\uff1e\u203a\u232a\u27e9\u3009]{0,80})"
_compiled: dict[str, re.Pattern[str]] = {}  # compiled on first use: most hook calls never defang anything
_fold: dict[int, str] | None = None


def _re(name: str) -> re.Pattern[str]:
    if name not in _compiled:
        source = {"candidate": "[" + re.escape(BRACKETS) + "]|" + _ENTITY + "|" + _ESCAPE + "|" + _PERCENT,
                  "spelled": _SPELLED_CHAR, "tag": _TAG_AFTER}[name]
        _compiled[name] = re.compile(source)
    return _compiled[name]


def _char(match: re.Match[str]) -> str | None:
    """The character a bracket candidate or a spelled character stands for (None: not one)."""
    groups = match.groupdict()
    try:
        for key, base in (("hex", 16), ("dec", 10), ("brace", 16), ("u4", 16), ("u8", 16), ("x2", 16),
                          ("oct", 8), ("pc", 16)):
            if groups.get(key):
                return chr(int(groups[key], base))
    except (ValueError, OverflowError):
        return None
    if groups.get("name"):
        import html

        return html.unescape(f"&{groups['name']};")
    if groups.get("named"):
        return _NAMED[groups["named"]]
    if groups.get("pct"):
        text = groups["pct"]
        for _ in range(3):  # %253C is %3C once decoded
            text = unquote(text, errors="strict") if "%" in text else text
        return text[:1] or None
    return match.group(0)


def _folded(window: str) -> str:
    """``window`` as a reader sees its letters: spellings decoded, decomposed, marks and invisibles dropped,
    look-alikes folded to ASCII, lower case, leetspeak undone."""
    global _fold
    if _fold is None:
        _fold = str.maketrans(lookalikes.FOLD_FROM, lookalikes.FOLD_TO)
    window = _re("spelled").sub(lambda m: _char(m) or m.group(0), window)
    bare = "".join(c for c in unicodedata.normalize("NFKD", window)
                   if unicodedata.category(c) not in ("Mn", "Me", "Cf"))
    return bare.translate(_fold).lower().translate(_LEET)


def _reads_as_frame(text: str, after: int, plain: bool) -> bool:
    """Whether what follows a bracket ending at ``after`` reads as a frame's tag word."""
    if plain:  # after a real "<", anything unusual is treated as an attempt
        raw = _re("tag").match(unicodedata.normalize("NFKC", text[after:after + 120]))
        word = raw.group(1) if raw else ""
        if len(word) > 64 or any(not (32 < ord(c) < 127) for c in word):
            return True
    match = _re("tag").match(_folded(text[after:after + 240]))
    # Brackets are skipped: some are letters (く, ᐸ), and "<" before a neutralised "く" must still count.
    letters = "".join(c for c in (match.group(1) if match else "") if c.isalpha() and c not in BRACKETS)
    return any(letters.startswith(w) for w in _WORDS)


def defang(text: str) -> str:
    """Neutralise every bracket in ``text`` (NFC-normalized) that could open or close a frame."""
    text = unicodedata.normalize("NFC", text)
    if not _re("candidate").search(text):  # the common case: nothing to look at
        return text
    out = list(text)
    for match in _re("candidate").finditer(text):
        char = _char(match)
        if not char or char not in BRACKETS:
            continue
        if _reads_as_frame(text, match.end(), char in _PLAIN):
            out[match.start()] = "["
    return "".join(out)


def escape_attr(value: str) -> str:
    """An attribute value that cannot end the attribute or the tag, nor smuggle a frame."""
    safe = defang(value)
    return (safe.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("\n", " ").replace("\r", " "))


def lesson_frame(lesson_id: str, scope: str, reviewer: str | None, verified: bool, text: str,
                 extra: dict[str, str] | None = None) -> str:
    attrs = [f'id="{escape_attr(lesson_id)}"', f'scope="{escape_attr(scope)}"']
    if reviewer:
        attrs.append(f'reviewed-by="{escape_attr(reviewer)}"')
    for key, value in (extra or {}).items():
        attrs.append(f'{key}="{escape_attr(value)}"')
    if verified:
        attrs.append("verified")
    return f"<team-memory {' '.join(attrs)}>\n{defang(text).strip()}\n</team-memory>"


def message_frame(sender: str, message_id: str, text: str, extra: dict[str, str] | None = None) -> str:
    attrs = [f'from="{escape_attr(sender)}"', f'id="{escape_attr(message_id)}"']
    for key, value in (extra or {}).items():
        attrs.append(f'{key}="{escape_attr(value)}"')
    return f"<team-message {' '.join(attrs)}>\n{defang(text).strip()}\n</team-message>"
