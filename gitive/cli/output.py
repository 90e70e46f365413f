"""Printing for people (Rich) and for programs (``--json``), and progress bars for long work."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class _LazyConsole:
    """A Rich ``Console`` made on first use: importing Rich costs ~25 ms, which ``--json`` output never needs."""

    def __init__(self, stderr: bool) -> None:
        self._stderr = stderr
        self._console: Any = None

    def real(self) -> Any:
        if self._console is None:
            from rich.console import Console

            # soft_wrap: never break a long line (ref names, ids) when output goes to a file or a pipe.
            self._console = Console(stderr=self._stderr, highlight=False, soft_wrap=True)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real(), name)


console: Any = _LazyConsole(stderr=False)
err_console: Any = _LazyConsole(stderr=True)


def emit_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, indent=2, sort_keys=True, default=str) + "\n")


@contextmanager
def progress_bar(label: str, enabled: bool = True) -> Iterator[Any]:
    """Yield a ``(done, total)`` callback that drives a bar on stderr once the work is long enough to show."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    with Progress(TextColumn(label), BarColumn(), MofNCompleteColumn(), console=err_console.real(),
                  transient=True) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update


def short(machine: str) -> str:
    return machine[:12]


def ref_label(name: str) -> str:
    """``refs/hive-remotes/origin/logs/<machine>/roster`` -> ``origin:<machine[:12]>/roster``."""
    from gitive.store.refs import parse_log_ref

    parsed = parse_log_ref(name)
    if parsed is None:
        return name
    return f"{parsed.source}:{short(parsed.machine)}/{parsed.log}"


def escape(text: str) -> str:
    """``text`` with Rich markup characters escaped, so a ref name or a remote's message prints as it is."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)
