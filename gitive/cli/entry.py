"""The ``gitive`` console script: answer a no-op sync before importing anything heavy, else run the CLI."""

from __future__ import annotations

import sys


def main() -> None:
    from gitive.cli.fastsync import try_noop

    try:
        fast = try_noop(sys.argv[1:])
    except Exception:  # the fast path is an optimisation: any surprise falls back to the full command
        fast = None
    if fast is not None:
        sys.exit(fast)
    from gitive.cli.main import run

    sys.exit(run())
