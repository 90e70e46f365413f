"""Generate ``gitive/capture/lookalikes.py``, the Unicode data defang reads, from Unicode's own data.

    .venv/bin/python -m testing.lookalikes          # rewrite the module
    .venv/bin/python -m testing.lookalikes --check  # exit 1 if it is out of date

Sources, both maintained upstream, neither copied by hand:

- Unicode's confusables (``confusables.txt`` of UTS #39, as packaged in ``confusable-homoglyphs``, MIT): which
  characters look like which;
- the Unicode Character Database of this interpreter (``unicodedata``): categories, names, decompositions.

What it derives:

- ``ANGLES``: what a reader takes for ``<``: ``<`` itself, every character named a less-than, a left angle or
  arrowhead, or anything left-pointing (angles, triangles, pointers), everything confusable with one of those
  (``⊲`` through ``◁``), and everything that decomposes into one (``≮`` is ``<`` with U+0338, ``＜`` is a
  compatibility ``<``).
- ``OPENERS``: every other opening bracket or opening quotation mark outside ASCII (Unicode categories Ps and
  Pi: ``〔``, ``❨``, ``“``, …) and what is confusable with or decomposes into one. ASCII ``(``, ``[`` and ``{``
  are ordinary prose and stay out.
- ``FOLD_FROM``/``FOLD_TO``: characters confusable with one ASCII letter, digit, ``-``, ``_`` or ``/``, and that
  character, so a tag word spelled in look-alike letters reads as the word it imitates.
- ``ENTITIES``: the HTML named character references that spell one of those brackets (``&lt``, ``&lang;``, …).
"""

from __future__ import annotations

import argparse
import html.entities
import json
import sys
import unicodedata
from importlib import resources
from pathlib import Path

TARGET = Path(__file__).resolve().parents[1] / "gitive" / "capture" / "lookalikes.py"
ANGLE_WORDS = ("LESS-THAN", "LEFT-POINTING", "LEFT POINTING", "LEFT ANGLE", "LEFT ARROWHEAD")
PROSE = set("([{")
SKIP_CATEGORIES = ("Mn", "Me", "Cf", "Cc", "Cs", "Co", "Cn", "Zs", "Zl", "Zp")  # marks, invisibles, spaces


def _confusables() -> dict[str, list[str]]:
    """Every single character and the single characters Unicode calls confusable with it (both ways)."""
    text = resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text(encoding="utf-8")
    graph: dict[str, set[str]] = {}
    for key, items in json.loads(text).items():
        for item in items:
            other = item["c"]
            if len(key) == 1 and len(other) == 1 and key != other:
                graph.setdefault(key, set()).add(other)
                graph.setdefault(other, set()).add(key)
    return {k: sorted(v) for k, v in graph.items()}


def _all_chars() -> list[str]:
    return [chr(i) for i in range(sys.maxunicode + 1)
            if unicodedata.category(chr(i)) not in ("Cn", "Cs", "Co")]


def _closure(seeds: set[str], graph: dict[str, list[str]], chars: list[str]) -> set[str]:
    """``seeds``, whatever is confusable with them (never through ASCII), and whatever decomposes into them."""
    found, frontier = set(seeds), list(seeds)
    while frontier:
        for other in graph.get(frontier.pop(), []):
            if other not in found and not other.isascii() and unicodedata.category(other) not in SKIP_CATEGORIES:
                found.add(other)
                frontier.append(other)
    for ch in chars:
        if ch not in found and not ch.isascii():
            head = unicodedata.normalize("NFKD", ch)[:1]
            if head in found or (head == "<" and "<" in found):
                found.add(ch)
    return found


def derive() -> dict[str, object]:
    graph, chars = _confusables(), _all_chars()
    named = {c for c in chars if unicodedata.category(c) not in SKIP_CATEGORIES
             and any(word in unicodedata.name(c, "") for word in ANGLE_WORDS)}
    angles = _closure({"<"} | named, graph, chars)
    openers = {c for c in chars if unicodedata.category(c) in ("Ps", "Pi") and c not in PROSE}
    openers = _closure(openers, graph, chars) - angles - PROSE
    fold: dict[str, str] = {}
    for ch, others in graph.items():
        if ch.isascii() and (ch.isalnum() or ch in "-_/"):
            for other in others:
                if not other.isascii() and unicodedata.category(other) not in SKIP_CATEGORIES:
                    fold.setdefault(other, ch.lower())
    brackets = angles | openers
    entities = sorted({name.rstrip(";") for name, value in html.entities.html5.items() if value in brackets})
    return {"angles": "".join(sorted(angles)), "openers": "".join(sorted(openers)),
            "fold_from": "".join(sorted(fold)), "fold_to": "".join(fold[c] for c in sorted(fold)),
            "entities": entities}


def _literal(text: str) -> str:
    """A string literal of ``text`` with every non-ASCII character escaped, in lines under 110 columns."""
    tokens = [c if c.isascii() and c.isprintable() and c not in "\\\"" else
              (f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}") for c in text]
    lines, line = [], ""
    for token in tokens:  # never split an escape
        if len(line) + len(token) > 100:
            lines.append(line)
            line = ""
        line += token
    lines.append(line)
    return "(\n" + "\n".join(f'    "{part}"' for part in lines) + "\n)"


def render() -> str:
    data = derive()
    import confusable_homoglyphs

    version = getattr(confusable_homoglyphs, "__version__", None) or _package_version()
    names = ", ".join(f'"{n}"' for n in data["entities"])
    return f'''"""Look-alike brackets and letters for defang (:mod:`gitive.capture.framing`). Generated: do not edit.

Written by ``python -m testing.lookalikes`` from Unicode's confusables (UTS #39 ``confusables.txt``, as packaged
in confusable-homoglyphs {version}, MIT licence; the data is Unicode, Inc.'s, under the Unicode License v3) and
the Unicode Character Database {unicodedata.unidata_version} (``unicodedata``). ``testing/lookalikes.py`` says
what each table holds and how it is derived; ``tests/capture/test_lookalikes.py`` checks it is current.
"""

UNICODE_VERSION = "{unicodedata.unidata_version}"

# What a reader takes for "<".
ANGLES = {_literal(data["angles"])}

# Other opening brackets and quotation marks (outside ASCII), and their look-alikes.
OPENERS = {_literal(data["openers"])}

# FOLD_FROM[i] looks like the ASCII character FOLD_TO[i].
FOLD_FROM = {_literal(data["fold_from"])}
FOLD_TO = {_literal(data["fold_to"])}

# HTML named character references (without the ";", which HTML lets some of them drop) that spell a bracket.
ENTITIES = ({names},)
'''


def _package_version() -> str:
    from importlib.metadata import version

    return version("confusable-homoglyphs")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="Exit 1 if the module is out of date.")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET} is out of date: run python -m testing.lookalikes", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
