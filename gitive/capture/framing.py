"""Frames around what gitive puts in front of an agent, and the defang that keeps stored text inside them.

Every injected lesson is one ``<team-memory …>`` frame and every message one ``<team-message …>`` frame.
Attribute values are escaped so they cannot close the attribute or the tag, and bodies are defanged: any
opening bracket (or one of its Unicode look-alikes) whose tag word reads as ``team-memory``/``team-message``
under a leetspeak reading, holds anything but printable ASCII, or runs long, becomes ``[``. So no stored text
can open or close a frame (``hive-overview.md`` part 1 §10).
"""

from __future__ import annotations

import re
import unicodedata

# "<" and characters that render like it or are folded to it by some tokenizer or font.
BRACKETS = "<\u27ea\u2991\u02f1\u22d6\uff1c\u2039\u2329\u27e8\u3008\u276c\u276e\u29fc\u02c2\u1438\u16b2\u227a\ufe64\u2770\u3008\u300a\u00ab\u226a"
_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "@": "a", "5": "s", "$": "s", "7": "t",
                       "|": "i", "!": "i", "+": "t"})
_WORDS = ("teammemory", "teammessage", "team", "memory", "message")
_ANY_BRACKET = re.compile("[" + re.escape(BRACKETS) + "]")
_TAG_AFTER = re.compile(r"\s*/?\s*([^\s>\uff1e\u203a\u232a\u27e9\u3009]{0,80})")


def _reads_as_frame(word: str) -> bool:
    if not word:
        return False
    if len(word) > 64 or any(not (32 < ord(c) < 127) for c in word):
        return True  # anything unusual after a bracket is treated as a frame attempt
    folded = unicodedata.normalize("NFKC", word).lower().translate(_LEET)
    letters = "".join(c for c in folded if c.isalpha())
    return any(letters.startswith(w) for w in _WORDS)


def defang(text: str) -> str:
    """Neutralise every bracket in ``text`` that could open or close a frame."""
    if not _ANY_BRACKET.search(text):  # the common case: nothing to look at
        return text
    text = unicodedata.normalize("NFC", text)
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch in BRACKETS:
            match = _TAG_AFTER.match(text, i + 1)
            if match and _reads_as_frame(match.group(1)):
                out.append("[")
                i += 1
                continue
        out.append(ch)
        i += 1
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
