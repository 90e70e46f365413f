"""An attacker who can get any text into a lesson, a message, a name or a scope tries to open or close a frame.

Disguises are generated from Unicode's data (every character :mod:`testing.frames` reads as a bracket, the
letters Unicode's confusables map to ASCII), spelled as character references, escapes or percent-encoding,
with invisible characters, combining marks and leetspeak inside the tag word, and put anywhere in any text.
Whatever comes out, the frame holds exactly its own opening and closing tag by the tests' own recogniser.
"""

from __future__ import annotations

import functools
import unicodedata

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gitive.capture import framing
from testing import frames

_OPENERS = sorted(frames.brackets()[0])
_CLOSERS = sorted(frames.brackets()[1])
_LEET = {"a": "4@", "e": "3", "i": "1|!", "o": "0", "s": "5$", "t": "7+"}
_INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u180e"]
_MARKS = ["\u0301", "\u0308", "\u0338", "\u20d2", "\u0335", "\u0337"]
_SPELLED_LT = ["&lt;", "&LT;", "&lt", "&amp;lt;", "&amp;amp;lt;", "&#60;", "&#060;", "&#x3c;", "&#X3C;", "&#x003C;",
               "\\u003c", "\\u003C", "\\x3c", "\\074", "\\u{3c}", "\\U0000003c", "%3C", "%3c", "%253C",
               "&lang;", "&lsaquo;", "&laquo;", "&LeftAngleBracket;", "<\u0338", "<\u20d2", "<\u200b"]


@functools.cache
def _look_alikes(letter: str) -> list[str]:
    graph = frames._graph()
    return sorted(c for c in graph.get(letter, set()) | graph.get(letter.upper(), set())
                  if frames._letters().get(ord(c)) == letter and unicodedata.category(c)[0] == "L")


@st.composite
def _letter(draw: st.DrawFn, letter: str) -> str:
    kind = draw(st.sampled_from(["plain", "upper", "leet", "lookalike", "entity", "escape"]))
    if kind == "upper":
        out = letter.upper()
    elif kind == "leet" and letter in _LEET:
        out = draw(st.sampled_from(list(_LEET[letter])))
    elif kind == "lookalike" and _look_alikes(letter):
        out = draw(st.sampled_from(_look_alikes(letter)))
    elif kind == "entity":
        out = draw(st.sampled_from([f"&#{ord(letter)};", f"&#x{ord(letter):x};"]))
    elif kind == "escape":
        out = f"\\u{ord(letter):04x}"
    else:
        out = letter
    extra = draw(st.sampled_from(["", "", "", *_INVISIBLE, *_MARKS]))
    return out + extra


@st.composite
def _word(draw: st.DrawFn) -> str:
    second = draw(st.sampled_from(["memory", "message"]))
    sep = draw(st.sampled_from(["-", "_", ".", "", "\u2010", "\u2011"]))
    return "".join(draw(_letter(c)) for c in "team") + sep + "".join(draw(_letter(c)) for c in second)


@st.composite
def disguised_tag(draw: st.DrawFn) -> str:
    opener = draw(st.one_of(st.sampled_from(_OPENERS), st.sampled_from(_SPELLED_LT),
                            st.sampled_from(_OPENERS).map(lambda c: f"&#x{ord(c):x};"),
                            st.sampled_from(_OPENERS).map(lambda c: f"\\u{ord(c):04x}")))
    slash = draw(st.sampled_from(["", "", "/", " / ", "\t/", "&sol;", "\\u002f", "%2F", "\u2044"]))
    space = draw(st.sampled_from(["", " ", "\u00a0", "\u200b"]))
    closer = draw(st.sampled_from([">", ">", "&gt;", "", " verified>", *_CLOSERS[:40]]))
    return opener + slash + space + draw(_word()) + closer


TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)


@settings(max_examples=200)
@given(st.lists(st.tuples(TEXT, disguised_tag()), min_size=1, max_size=4), TEXT)
def test_no_generated_disguise_opens_or_closes_a_lesson_frame(parts: list[tuple[str, str]], tail: str) -> None:
    body = "".join(text + tag for text, tag in parts) + tail
    assume(frames.frame_tags(body))  # the recogniser must take the attack for a tag
    out = framing.lesson_frame("a1b2", "project", "alice", True, body, {"kind": "Gotcha"})
    assert frames.frame_tags(out) == [("open", "teammemory"), ("close", "teammemory")], framing.defang(body)


@settings(max_examples=150)
@given(disguised_tag(), TEXT, TEXT)
def test_no_generated_disguise_escapes_a_message_frame_or_an_attribute(tag: str, before: str, after: str) -> None:
    text = before + tag + after
    assume(frames.frame_tags(text))
    out = framing.message_frame(text, text, text, {"repo": text})
    assert frames.frame_tags(out) == [("open", "teammessage"), ("close", "teammessage")], out
    card = framing.lesson_frame(text, text, text, True, "body", {"kind": text, "label": text})
    assert frames.frame_tags(card) == [("open", "teammemory"), ("close", "teammemory")], card


@settings(max_examples=300)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_defang_changes_nothing_but_brackets_and_is_stable(text: str) -> None:
    once = framing.defang(text)
    normal = unicodedata.normalize("NFC", text)
    assert framing.defang(once) == once
    assert len(once) == len(normal)
    assert all(a == b or b == "[" for a, b in zip(normal, once, strict=True))
