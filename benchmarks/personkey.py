"""What a person key's passphrase costs to try (issue 23 item 6, gitive/core/personkey.py): one unlock at the
cost gitive writes now (argon2id MODERATE: 3 passes over 256 MiB) against the cost it wrote before
(INTERACTIVE: 2 passes over 64 MiB), in the same run, and what the upgrade at the next unlock adds once.

Each unlock is a real ``personkey.unlock`` of a key file on disk. CPU time is what a quiet machine's wall time
would be (libsodium's argon2id runs on one thread); wall time is printed too, with the load average, since the
machine may be shared. An attacker with the file pays the CPU figure per guess on each core.

Target (issue 23): an unlock at MODERATE takes at most 1 s of CPU.

    .venv/bin/python benchmarks/personkey.py            # 5 unlocks of each
    .venv/bin/python benchmarks/personkey.py --runs 2   # quick
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

PASS = "benchmark person key passphrase"


def _key(home: Path, limits: object) -> Path:
    """A key file at ``limits``, written as the gitive of its time wrote it (the format did not change)."""
    from gitive.core import personkey

    path = home / "person.key"
    home.mkdir(parents=True, exist_ok=True)
    os.environ.pop(personkey.TEST_KDF, None)
    data = {"format": personkey.FORMAT, "version": personkey.VERSION, "kind": "passphrase", "public": "",
            **personkey._seal(b"k" * 32, PASS, limits)}  # the old writer's exact output
    from nacl.signing import SigningKey

    data["public"] = SigningKey(b"k" * 32).verify_key.encode().hex()
    personkey._write(path, data, replace=True)
    return path


def _unlock(path: Path, upgrade: bool) -> tuple[float, float]:
    import dataclasses

    from gitive.core import personkey

    keyfile = personkey.load(path)
    if not upgrade:
        keyfile = dataclasses.replace(keyfile, path=None)
    wall, cpu = time.perf_counter(), time.process_time()
    personkey.unlock(keyfile, PASS)
    return time.perf_counter() - wall, time.process_time() - cpu


def main(argv: list[str] | None = None) -> int:
    from gitive.core import personkey

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    base = Path(tempfile.mkdtemp(prefix="gitive-bench-personkey-"))
    results: dict[str, list[tuple[float, float]]] = {"interactive": [], "moderate": []}
    for _ in range(args.runs):  # interleaved, so both see the same load
        for name, limits in (("interactive", personkey.INTERACTIVE), ("moderate", personkey.MODERATE)):
            results[name].append(_unlock(_key(base / name, limits), upgrade=False))
    upgrade = _unlock(_key(base / "upgrade", personkey.INTERACTIVE), upgrade=True)
    load = os.getloadavg()[0]
    for name, runs in results.items():
        cpu = statistics.median(c for _, c in runs)
        wall = statistics.median(w for w, _ in runs)
        print(f"unlock at {name:<11} median {cpu:.2f} s CPU, {wall:.2f} s wall over {args.runs} runs")
    print(f"first unlock of an INTERACTIVE file (opens it, re-encrypts at MODERATE): {upgrade[1]:.2f} s CPU, "
          f"{upgrade[0]:.2f} s wall")
    moderate = statistics.median(c for _, c in results["moderate"])
    ratio = moderate / max(1e-9, statistics.median(c for _, c in results["interactive"]))
    print(f"MODERATE / INTERACTIVE per guess: {ratio:.1f}x; load average {load:.1f} on {os.cpu_count()} cores")
    ok = moderate <= 1.0
    print(f"target: unlock at MODERATE at most 1 s CPU: {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
