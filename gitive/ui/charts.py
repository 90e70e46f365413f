"""Server-side SVG plots: bars over time and a timeline of spans. No script, no CDN; colours come from CSS.

Each chart is an ``<figure>`` whose SVG has a title for screen readers and a ``<details>`` table with the
same numbers, so nothing is only visible as a picture.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from gitive.ui.html import h, table

W, H, PAD_L, PAD_B, PAD_T = 960, 150, 44, 22, 10
ROW_H, LABEL_W = 22, 170  # rows of timelines: height, and the width of their labels


class Bar(NamedTuple):
    label: str  # shown under the bar (sparsely) and in the tooltip
    value: float
    extra: str = ""  # more tooltip text


class Mark(NamedTuple):
    row: str
    at: int
    cls: str  # css class, e.g. the gate's branch
    tip: str


class Span(NamedTuple):
    row: str
    start: int
    end: int
    cls: str  # css class: busy, idle, waiting_approval, stale


def _fmt(value: float) -> str:
    return f"{value:.0f}" if value >= 10 or value == int(value) else f"{value:.1f}"


def bars(chart_id: str, title: str, unit: str, data: Sequence[Bar], *, limit: float | None = None,
         limit_label: str = "") -> str:
    """A bar chart of ``data`` in order (oldest first), y axis from zero to the largest value (or ``limit``,
    drawn as a dashed line labelled ``limit_label``; bars above it are marked ``over``)."""
    if not data:
        return ""
    top = max([b.value for b in data] + [limit or 0]) or 1
    inner_w, inner_h = W - PAD_L - 4, H - PAD_B - PAD_T
    step = inner_w / len(data)
    every = max(1, len(data) // 8)
    parts = [f'<line class="axis" x1="{PAD_L}" y1="{H - PAD_B}" x2="{W - 4}" y2="{H - PAD_B}"/>',
             f'<text class="tick" x="{PAD_L - 6}" y="{PAD_T + 4}" text-anchor="end">{h(_fmt(top))}</text>',
             f'<text class="tick" x="{PAD_L - 6}" y="{H - PAD_B}" text-anchor="end">0</text>']
    for i, b in enumerate(data):
        bh = inner_h * (b.value / top)
        x = PAD_L + i * step
        tip = f"{b.label}: {_fmt(b.value)} {unit}" + (f" ({b.extra})" if b.extra else "")
        over = " over" if limit is not None and b.value > limit else ""
        parts.append(f'<rect class="bar{over}" x="{x + step * 0.12:.1f}" y="{H - PAD_B - bh:.1f}" '
                     f'width="{max(step * 0.76, 1):.1f}" height="{bh:.1f}"><title>{h(tip)}</title></rect>')
        if i % every == 0:
            parts.append(f'<text class="tick" x="{x + step / 2:.1f}" y="{H - 6}" text-anchor="middle">'
                         f"{h(b.label)}</text>")
    if limit is not None:
        y = H - PAD_B - inner_h * (limit / top)
        parts.append(f'<line class="limit" x1="{PAD_L}" y1="{y:.1f}" x2="{W - 4}" y2="{y:.1f}"/>'
                     f'<text class="tick limit-label" x="{W - 6}" y="{y - 4 if y > PAD_T + 12 else y + 13:.1f}" '
                     f'text-anchor="end">'
                     f"{h(limit_label or _fmt(limit))}</text>")
    rows = [(h(b.label), h(_fmt(b.value)), h(b.extra)) for b in data]
    return _figure(chart_id, title, parts, table(title, ("when", unit, "note"), rows, cls="data"))


def _rows(names: list[str], *, grid: bool = False) -> tuple[list[str], int]:
    """The frame of a chart with one labelled row per name: its parts so far, and its height."""
    height = PAD_T + ROW_H * len(names) + PAD_B
    parts = [f'<line class="axis" x1="{LABEL_W}" y1="{height - PAD_B}" x2="{W - 8}" y2="{height - PAD_B}"/>']
    for i, name in enumerate(names):
        y = PAD_T + i * ROW_H
        parts.append(f'<text class="tick" x="{LABEL_W - 6}" y="{y + 15}" text-anchor="end">{h(name[:28])}</text>')
        if grid:
            parts.append(f'<line class="grid" x1="{LABEL_W}" y1="{y + 11}" x2="{W - 8}" y2="{y + 11}"/>')
    return parts, height


def marks(chart_id: str, title: str, points: Sequence[Mark], since: int, until: int) -> str:
    """One row per distinct ``Mark.row``, each mark a dot at its time between ``since`` and ``until``."""
    shown = [p for p in points if since <= p.at <= until]
    if not shown or until <= since:
        return ""
    rows = sorted(dict.fromkeys(p.row for p in shown))
    parts, height = _rows(rows, grid=True)
    scale = (W - LABEL_W - 12) / (until - since)
    for p in shown:
        y = PAD_T + rows.index(p.row) * ROW_H + 11
        parts.append(f'<circle class="mark {h(p.cls)}" cx="{LABEL_W + (p.at - since) * scale:.1f}" cy="{y}" r="5">'
                     f"<title>{h(p.tip)}</title></circle>")
    days = (until - since) / 86_400_000
    parts.append(f'<text class="tick" x="{LABEL_W}" y="{height - 6}">{days:.0f} d ago</text>')
    parts.append(f'<text class="tick" x="{W - 8}" y="{height - 6}" text-anchor="end">now</text>')
    rows_html = [(h(p.row), h(p.cls), h(p.tip)) for p in sorted(shown, key=lambda p: p.at, reverse=True)]
    return _figure(chart_id, title, parts, table(title, ("who", "what", "detail"), rows_html, cls="data"), height)


def timeline(chart_id: str, title: str, spans: Sequence[Span], since: int, until: int) -> str:
    """One row per distinct ``Span.row``, each span a bar between its start and end, clipped to the window."""
    if not spans or until <= since:
        return ""
    rows = list(dict.fromkeys(s.row for s in spans))
    parts, height = _rows(rows)
    row_h, label_w = ROW_H, LABEL_W
    scale = (W - label_w - 8) / (until - since)
    for s in spans:
        start, end = max(s.start, since), min(max(s.end, s.start), until)
        if end < since or start > until:
            continue
        y = PAD_T + rows.index(s.row) * row_h
        width = max((end - start) * scale, 2)
        parts.append(f'<rect class="span {h(s.cls)}" x="{label_w + (start - since) * scale:.1f}" y="{y + 3}" '
                     f'width="{width:.1f}" height="{row_h - 6}"><title>{h(s.row)}: {h(s.cls)}</title></rect>')
    hours = (until - since) / 3_600_000
    parts.append(f'<text class="tick" x="{label_w}" y="{height - 6}">{hours:.0f} h ago</text>')
    parts.append(f'<text class="tick" x="{W - 8}" y="{height - 6}" text-anchor="end">now</text>')
    rows_html = [(h(s.row), h(s.cls), h(f"{(s.end - s.start) // 60_000} min")) for s in spans]
    return _figure(chart_id, title, parts, table(title, ("session", "state", "span"), rows_html, cls="data"),
                   height)


def _figure(chart_id: str, title: str, parts: list[str], data_table: str, height: int = H) -> str:
    return (f'<figure class="chart" id="{h(chart_id)}"><figcaption>{h(title)}</figcaption>'
            f'<svg viewBox="0 0 {W} {height}" role="img" aria-labelledby="{h(chart_id)}-t" '
            f'preserveAspectRatio="xMinYMin meet"><title id="{h(chart_id)}-t">{h(title)}</title>'
            + "".join(parts) + f"</svg><details><summary>Numbers</summary>{data_table}</details></figure>")
