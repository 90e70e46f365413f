"""What gitive costs a ``claude -p "say hi"`` session: real Claude Code against the scripted model, quiet and
under load, without gitive, with its hooks, and with its hooks and MCP server.

    .venv/bin/python benchmarks/claude_overhead.py              # 5 rounds per setting
    .venv/bin/python benchmarks/claude_overhead.py --rounds 3   # quicker

What it does: builds the real-harness team once (``testing.harness.team.build``: alice and bob, eight lessons
reviewed by a person), then makes three copies of alice's clone setting: ``bare`` (no ``gitive install``: no
hooks, no ``.mcp.json``), ``hooks`` (``.claude/settings.json`` as ``gitive install`` writes it, the MCP entry
removed) and ``hooks+mcp`` (both, as installed). Each round runs the three, interleaved, as ``claude -p "say
hi"`` with Claude's default settings and the product's default hook budget, against the scripted model server
(``testing/harness``); the wall time of the whole process is the figure. Quiet first, then under the load
generator (``testing/load.py``: 2 busy processes per core). It prints the median of each setting and gitive's
overhead (median with, less median without), in wall time and in CPU time: the CPU the session's whole process
tree used (Claude Code, its hooks, its MCP server, and the namespace wrapper common to all three; from the
reaped children's rusage). On a machine shared with other work the wall time follows whatever else runs, the
CPU time much less, so it is the figure to read when the load average is above the core count.

Targets (issue 18): hooks and MCP together add <= 0.5 s quiet and <= 1.5 s under load. The binary is the
pinned one (``testing/harness/install.py``), installed from the npm registry on first use.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _common import hermetic_git

from testing.harness import claude, install
from testing.harness.script import Script, Text
from testing.harness.server import serving
from testing.harness.team import build
from testing.harness.team import install as gitive_install
from testing.load import bare_python_ms, cpu_load

SETTINGS = ("bare", "hooks", "hooks+mcp")


def _settings(team_clone: Path, base: Path) -> dict[str, Path]:
    """Three clones of alice's repository: without gitive, with its hooks only, with hooks and MCP."""
    out = {}
    for name in SETTINGS:
        place = base / name.replace("+", "-")
        shutil.copytree(team_clone, place, symlinks=True)
        if name == "bare":
            shutil.rmtree(place / ".claude", ignore_errors=True)
            (place / ".mcp.json").unlink(missing_ok=True)
        elif name == "hooks":
            (place / ".mcp.json").unlink(missing_ok=True)
        out[name] = place
    return out


def _children_cpu_s() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _round(model: object, places: dict[str, Path], home: Path, gitive_home: Path
           ) -> dict[str, tuple[float, float]]:
    """One session per setting: its wall seconds and its process tree's CPU seconds (the load's busy processes
    are children too, but are reaped only when the load stops, so they are not in these differences)."""
    times = {}
    for name, place in places.items():
        model.script = Script([Text("hi")])  # type: ignore[attr-defined]
        before = _children_cpu_s()
        run = claude.session(model, place, home, gitive_home, "say hi", budget=None)  # type: ignore[arg-type]
        if run.code != 0:
            raise SystemExit(f"claude exited {run.code} in {name}:\n{run}")
        times[name] = (run.seconds, _children_cpu_s() - before)
    return times


def measure(rounds: int, loaded: bool, places: dict[str, Path], home: Path, gitive_home: Path
            ) -> dict[str, object]:
    samples: dict[str, list[float]] = {n: [] for n in SETTINGS}
    cpu: dict[str, list[float]] = {n: [] for n in SETTINGS}
    with serving() as model, (cpu_load(per_core=2, seconds=1800) if loaded else _nothing()):
        bare_py = statistics.median(bare_python_ms(5))
        for _ in range(rounds):
            for name, (seconds, cpu_s) in _round(model, places, home, gitive_home).items():
                samples[name].append(seconds)
                cpu[name].append(cpu_s)
    medians = {n: statistics.median(v) for n, v in samples.items()}
    cpu_medians = {n: statistics.median(v) for n, v in cpu.items()}
    return {"load": "load" if loaded else "quiet", "python_c_pass_ms": round(bare_py),
            "load_average_1m": round(os.getloadavg()[0], 1),
            "median_s": {n: round(m, 2) for n, m in medians.items()},
            "overhead_s": {n: round(medians[n] - medians["bare"], 2) for n in SETTINGS[1:]},
            "cpu_median_s": {n: round(m, 2) for n, m in cpu_medians.items()},
            "cpu_overhead_s": {n: round(cpu_medians[n] - cpu_medians["bare"], 2) for n in SETTINGS[1:]},
            "samples_s": {n: [round(x, 2) for x in v] for n, v in samples.items()}}


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="Rounds per setting, quiet and loaded (default 5).")
    parser.add_argument("--only", choices=("quiet", "load"), help="Only the quiet or only the loaded runs.")
    args = parser.parse_args()
    install.ensure("claude")
    base = Path(tempfile.mkdtemp(prefix="gc-", dir="/tmp"))
    try:
        hermetic_git(base / "hermetic")
        team = build(base / "team")
        gitive_install(team.alice, "claude")
        places = _settings(team.alice.clone, base / "settings")
        home = base / "claude-home"
        home.mkdir()
        results = [measure(args.rounds, loaded, places, home, team.alice.home)
                   for loaded in (False, True) if args.only in (None, "load" if loaded else "quiet")]
        print(json.dumps(results, indent=2))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
