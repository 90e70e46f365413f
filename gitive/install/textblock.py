"""A delimited block that gitive owns inside a text file it does not (``.codex/config.toml``,
``info/exclude``): everything outside the markers is the user's and is never touched."""

from __future__ import annotations

BEGIN = "# >>> gitive (managed; `gitive uninstall` removes it) >>>"
END = "# <<< gitive <<<"


def _span(text: str) -> tuple[int, int] | None:
    """Start and end offsets of the block (its two marker lines included), or None."""
    start = text.find(BEGIN + "\n")
    if start < 0 or (start > 0 and text[start - 1] != "\n"):
        return None
    end = text.find(END, start)
    if end < 0:
        return None
    end += len(END)
    return start, end + 1 if text.startswith("\n", end) else end


def block(body: str) -> str:
    return f"{BEGIN}\n{body.rstrip(chr(10))}\n{END}\n"


def body(text: str) -> str | None:
    """The body of the block in ``text`` (None if there is none)."""
    span = _span(text)
    if span is None:
        return None
    return text[span[0] + len(BEGIN) + 1: text.find(END, span[0])]


def put(text: str, body_text: str) -> str:
    """``text`` with the block holding ``body_text``: replaced in place, or appended after a blank line."""
    new = block(body_text)
    span = _span(text)
    if span is not None:
        return text[: span[0]] + new + text[span[1]:]
    if not text:
        return new
    return text + ("\n" if text.endswith("\n") else "\n\n") + new


def remove(text: str) -> str:
    """``text`` without the block and the blank line :func:`put` wrote before it."""
    span = _span(text)
    if span is None:
        return text
    head, tail = text[: span[0]], text[span[1]:]
    if not tail and head.endswith("\n\n"):
        head = head[:-1]
    return head + tail
