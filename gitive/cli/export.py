"""``gitive export``: verified records as JSON Lines, for jq or any other tool."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    app.command("export")(export)


def export(
    kind: list[str] = typer.Option([], "--kind", help="Only these record kinds (repeat it); default: lessons, "
                                                      "reviews, tombstones, obligations and their states, "
                                                      "firings, verdicts and items."),
    since: str | None = typer.Option(None, "--since", help="Only records from then on: 7d, 36h, 2w, 2026-11-01 "
                                                           "or 2026-11-01T09:00Z."),
    out: Path | None = typer.Option(None, "--out", help="Write to this file (replaced whole, only once the "
                                                        "export is complete) instead of stdout."),
) -> int:
    """Write the verified records this machine can read as JSON Lines, one record per line, oldest first.

    Each line has v, kind, author, person, log, seq, at, commit, scope, sealed and the record; a lesson line
    also its state and shown text. Sealed records appear only where this machine holds their key.

    Example: gitive export --kind lesson --since 30d | jq -r 'select(.lesson.state == "verified") | .lesson.text'
    """
    from gitive.core.clock import now_ms
    from gitive.core.records import KINDS as KNOWN_KINDS
    from gitive.errors import GitiveError
    from gitive.index import export as exporting
    from gitive.index.refresh import fresh_index
    from gitive.team.hive import open_hive

    unknown = sorted(set(kind) - set(KNOWN_KINDS))
    if unknown:
        raise GitiveError(f"no record kind {unknown[0][:80]!r}; known: {', '.join(sorted(KNOWN_KINDS))}")
    start = exporting.parse_since(since, now_ms()) if since else 0
    hive = open_hive()
    with fresh_index(hive) as (conn, _):
        lines = exporting.records(conn, tuple(kind) or exporting.DEFAULT_KINDS, start)
        if out is None:
            for line in lines:
                sys.stdout.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")
            return 0
        return _write(out, lines)


def _write(out: Path, lines: object) -> int:
    """All lines to a temporary file beside ``out``, then renamed over it: a failed export leaves ``out`` as it
    was, never half written."""
    from gitive.errors import GitiveError

    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    count = 0
    try:
        with open(tmp, "w", encoding="utf-8") as fh:
            for line in lines:  # type: ignore[attr-defined]
                fh.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")
                count += 1
        os.replace(tmp, out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise GitiveError(f"cannot write {str(out)[:80]}: {exc.strerror or exc}; nothing was written") from None
    print(f"exported {count} record(s) to {out}", file=sys.stderr)
    return 0
