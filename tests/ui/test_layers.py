"""The dashboard sits beside the CLI, below nothing it reads: it never loads the daemon (whose presence
directory it shares through :mod:`gitive.team.presence`)."""

from __future__ import annotations

import subprocess
import sys


def test_the_dashboard_does_not_load_the_daemon() -> None:
    code = ("import sys, gitive.ui.app, gitive.ui.server, gitive.cli.ui; "
            "print(sorted(m for m in sys.modules if m.startswith('gitive.daemon')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
