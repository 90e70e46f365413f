"""``python -m gitive.daemon [--interval S] [--repo PATH]``: the daemon in the foreground."""

from __future__ import annotations

import argparse
import sys

from gitive.daemon.runner import run
from gitive.errors import GitiveError

parser = argparse.ArgumentParser(prog="gitive-daemon")
parser.add_argument("--interval", type=float, default=30.0)
parser.add_argument("--repo")
args = parser.parse_args()
try:
    sys.exit(run(args.interval, args.repo))
except GitiveError as exc:
    print(f"gitive: {exc}", file=sys.stderr)
    sys.exit(1)
