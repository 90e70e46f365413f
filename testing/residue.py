"""Looking for forgotten text the way an attacker with the disk would: in every byte, not through gitive.

A retracted lesson must leave no trace a reader of the files could find: not in a reachable object, not in an
unreachable one still in the object database, not in a free page of the index or its write-ahead log.
``object_hits`` reads every object git holds (loose or packed, reachable or not, decompressed);
``file_hits`` reads every other file under a folder byte for byte.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterable
from pathlib import Path


def object_hits(git_dir: Path | str, needles: Iterable[str]) -> dict[str, list[str]]:
    """needle -> ids of every object in ``git_dir``'s object database whose content contains it."""
    wanted = [(n, n.encode()) for n in needles]
    proc = subprocess.run(["git", "cat-file", "--batch-all-objects", "--batch", "--unordered"], cwd=git_dir,
                          check=True, capture_output=True)
    data, pos, found = proc.stdout, 0, {}
    while pos < len(data):
        header_end = data.index(b"\n", pos)
        oid, _, size = data[pos:header_end].decode().split(" ")
        body = data[header_end + 1: header_end + 1 + int(size)]
        pos = header_end + 1 + int(size) + 1
        for text, raw in wanted:
            if raw in body:
                found.setdefault(text, []).append(oid)
    return found


def file_hits(root: Path | str, needles: Iterable[str], *, skip_objects: bool = True) -> dict[str, list[str]]:
    """needle -> every file under ``root`` whose raw bytes contain it (git's compressed objects are skipped:
    ``object_hits`` reads those decompressed)."""
    wanted = [(n, n.encode()) for n in needles]
    found: dict[str, list[str]] = {}
    for folder, dirs, files in os.walk(root):
        if skip_objects and Path(folder).name == "objects" and "pack" in dirs:
            dirs[:] = []
            continue
        for name in files:
            path = Path(folder) / name
            try:
                data = path.read_bytes()
            except OSError:
                continue
            for text, raw in wanted:
                if raw in data:
                    found.setdefault(text, []).append(str(path))
    return found


def ref_hits(git_dir: Path | str, needles: Iterable[str]) -> dict[str, list[str]]:
    """needle -> refs from which an object containing it is reachable (to say *why* it is still there)."""
    refs = subprocess.run(["git", "for-each-ref", "--format=%(refname)"], cwd=git_dir, check=True,
                          capture_output=True, text=True).stdout.split()
    needles = list(needles)
    found: dict[str, list[str]] = {}
    for ref in refs:
        ids = subprocess.run(["git", "rev-list", "--objects", ref], cwd=git_dir, check=True, capture_output=True,
                             text=True).stdout.split("\n")
        oids = [line.split(" ", 1)[0] for line in ids if line]
        proc = subprocess.run(["git", "cat-file", "--batch"], cwd=git_dir, check=True, capture_output=True,
                              input=("\n".join(oids) + "\n").encode())
        for text in needles:
            if text.encode() in proc.stdout:
                found.setdefault(text, []).append(ref)
    return found
