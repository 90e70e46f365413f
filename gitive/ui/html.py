"""HTML building blocks: every value escaped on the way in, the page shell, times and small widgets.

Pages are server-rendered strings. Everything a teammate wrote (lesson text, session ``doing``, file names)
goes through :func:`h`, so no stored text can open a tag or an attribute.
"""

from __future__ import annotations

import datetime as dt
import html
from collections.abc import Iterable, Sequence
from importlib import resources
from string import Template
from typing import Any

VIEWS = (("next", "Next", "/next"), ("team", "Team", "/team"), ("memory", "Memory", "/memory"),
         ("obligations", "Obligations", "/obligations"),
         ("gate", "Gate", "/gate"), ("mail", "Mail", "/mail"), ("health", "Health", "/health"))


def h(value: Any) -> str:
    """Escape ``value`` for text or a quoted attribute (None is empty)."""
    return "" if value is None else html.escape(str(value), quote=True)


def iso(ms: int | None) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ") if ms else ""


def ago(ms: int | None, now: int) -> str:
    """``<time>`` with a relative label ("4 min ago") and the exact UTC time as its title."""
    if not ms:
        return '<span class="muted">never</span>'
    s = max(0, (now - ms) // 1000)
    label = ("just now" if s < 45 else f"{s // 60 or 1} min ago" if s < 3600 else f"{s // 3600} h ago"
             if s < 86_400 else f"{s // 86_400} d ago")
    return f'<time datetime="{iso(ms)}" title="{iso(ms)}">{label}</time>'


def short(hex_id: str | None, n: int = 12) -> str:
    return (hex_id or "")[:n]


def table(caption: str, headers: Sequence[str], rows: Iterable[Sequence[str]], *, cls: str = "",
          row_attrs: Sequence[str] | None = None) -> str:
    """A table whose cells are already HTML; ``row_attrs`` adds attributes (already escaped) per row."""
    head = "".join(f'<th scope="col">{h(x)}</th>' for x in headers)
    body = []
    for i, row in enumerate(rows):
        attrs = f" {row_attrs[i]}" if row_attrs and row_attrs[i] else ""
        body.append(f"<tr{attrs}>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>")
    return (f'<table class="{h(cls)}"><caption>{h(caption)}</caption><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>")


def empty(title: str, lines: Sequence[str], commands: Sequence[str] = ()) -> str:
    """An empty state that says what to do next (``lines`` are HTML, ``commands`` plain shell text)."""
    cmds = "".join(f'<pre class="cmd"><code>{h(c)}</code></pre>' for c in commands)
    return (f'<section class="empty" aria-label="{h(title)}"><h3>{h(title)}</h3>'
            + "".join(f"<p>{line}</p>" for line in lines) + cmds + "</section>")


def command(text: str) -> str:
    """A shell command to copy: selectable text, and a copy button once JavaScript runs."""
    return f'<code class="cmd" data-copy="{h(text)}">{h(text)}</code>'


def stat(label: str, value: Any, cls: str = "") -> str:
    return f'<div class="stat {h(cls)}"><span class="value">{h(value)}</span><span class="label">{h(label)}</span></div>'


def badge(text: str, cls: str = "") -> str:
    return f'<span class="badge {h(cls or text)}">{h(text)}</span>'


def nav(current: str) -> str:
    items = []
    for n, (key, label, href) in enumerate(VIEWS, 1):
        here = ' aria-current="page"' if key == current else ""
        items.append(f'<li><a href="{href}" data-key="{n}"{here}><kbd>{n}</kbd> {h(label)}</a></li>')
    return '<nav aria-label="Views"><ul>' + "".join(items) + "</ul></nav>"


def page(view: str, title: str, main: str, *, team: str, repo: str) -> str:
    """The whole document around ``main`` (already HTML)."""
    shell = Template(resources.files("gitive.ui").joinpath("templates/page.html").read_text(encoding="utf-8"))
    return shell.substitute(title=h(title), view=h(view), nav=nav(view), main=main, team=h(team), repo=h(repo))
