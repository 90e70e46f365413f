"""The ``gitive`` console script: answer what needs no CLI framework before importing one, else run the CLI.

``--version`` and a sync that a running daemon answers (or that has nothing to do) import only the standard
library, and a bare ``gitive mcp`` (what harnesses run) starts the server without the CLI framework;
everything else goes to :func:`gitive.cli.main.run`, which loads only the invoked command's module.
"""

from __future__ import annotations

import sys


def main() -> None:
    argv = sys.argv[1:]
    if argv == ["--version"]:
        from gitive import __version__

        sys.stdout.write(f"gitive {__version__}\n")
        sys.exit(0)
    if argv == ["mcp"] or (len(argv) == 3 and argv[:2] == ["mcp", "--repo"]):  # how harnesses start it
        from gitive.mcp.front import main as serve  # stdlib only: it answers before the SDK has loaded

        try:
            sys.exit(serve(argv[2] if len(argv) == 3 else None))
        except KeyboardInterrupt:
            sys.exit(130)
    if argv[:1] == ["sync"]:
        from gitive.cli.fastsync import try_noop

        try:
            fast = try_noop(argv)
        except Exception:  # the fast path is an optimisation: any surprise falls back to the full command
            fast = None
        if fast is not None:
            sys.exit(fast)
    from gitive.cli.main import run

    sys.exit(run())
