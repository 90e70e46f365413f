#!/usr/bin/env python3
"""A deterministic worker for tests: reads its brief on stdin and does what its lines say, nothing else.

Standard library only, run by path (``[sys.executable, __file__]``) in the task's worktree, as the anchor runs
any worker. Lines it acts on (anywhere in the brief):

- ``replace: PATH: OLD => NEW`` replaces the text OLD with NEW in PATH (the fix);
- ``write: PATH: TEXT`` writes TEXT (``\\n`` for new lines) to PATH;
- ``delete: PATH`` removes PATH;
- ``ask: QUESTION`` writes QUESTION to ``$GITIVE_QUESTION_FILE`` and exits (a decision only a person makes);
- ``sleep: SECONDS`` sleeps first (to run past a budget);
- ``push: REF`` tries ``git push origin HEAD:REF`` and reports what git said (the Free tier's test);
- ``env: PATH`` writes the names of its environment variables to PATH (the secrets test);
- ``print-env: NAME`` prints that variable's value (its log must not show a secret);
- ``fail`` exits 3.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path


def main() -> int:
    brief = sys.stdin.read()
    lines = [ln.strip() for ln in brief.splitlines()]
    for line in lines:
        if line.startswith("sleep:"):
            time.sleep(float(line.split(":", 1)[1]))
    for line in lines:
        if line.startswith("ask:"):
            Path(os.environ["GITIVE_QUESTION_FILE"]).write_text(line.split(":", 1)[1].strip() + "\n")
            return 0
    for line in lines:
        key, _, rest = line.partition(":")
        rest = rest.strip()
        if key == "replace":
            path, _, change = rest.partition(":")
            old, _, new = change.strip().partition(" => ")
            target = Path(path.strip())
            target.write_text(target.read_text().replace(old, new))
        elif key == "write":
            path, _, text = rest.partition(":")
            Path(path.strip()).parent.mkdir(parents=True, exist_ok=True)
            Path(path.strip()).write_text(text.strip().replace("\\n", "\n") + "\n")
        elif key == "delete":
            Path(rest).unlink()
        elif key == "push":
            done = subprocess.run(["git", "push", "origin", f"HEAD:{rest}"], capture_output=True, text=True)
            print(f"push {rest}: exit {done.returncode}: {done.stderr.strip()}")
        elif key == "env":
            Path(rest).write_text("\n".join(sorted(os.environ)) + "\n")
        elif key == "print-env":
            print(f"{rest}={os.environ.get(rest, '')}")
        elif line == "fail":
            return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
