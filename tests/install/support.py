"""Helpers for install tests: byte-level snapshots of a repository, install/uninstall with this interpreter."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

from gitive.install import installer

ALL = ("claude", "codex", "cursor", "gemini")


def snapshot(root: Path) -> dict[str, Any]:
    """Every file (bytes and mode) and directory under ``root``, git's object store left out."""
    out: dict[str, Any] = {}
    for folder, dirs, files in os.walk(root):
        rel = Path(folder).relative_to(root).as_posix()
        if rel == ".git/objects" or rel.startswith(".git/objects/"):
            dirs[:] = []
            continue
        out[rel + "/"] = "dir"
        for name in files:
            path = Path(folder) / name
            out[f"{rel}/{name}"] = (path.read_bytes(), stat.S_IMODE(path.lstat().st_mode))
    return out


def install(repo: Path, harnesses: tuple[str, ...] = ALL, hooks: bool = True,
            python: str = sys.executable) -> installer.Report:
    return installer.install(repo, harnesses, hooks, python)


def uninstall(repo: Path, harnesses: tuple[str, ...] | None = None, hooks: bool = True) -> installer.Report:
    return installer.uninstall(repo, harnesses, hooks)


def read_json(path: Path) -> Any:
    return json.loads(path.read_text())
