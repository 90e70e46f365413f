"""``gitive install`` and ``gitive uninstall``: harness hooks, MCP configuration and git hooks for one
repository, written as owned entries and undone exactly (see :mod:`gitive.install.owned`)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

from gitive.errors import GitiveError
from gitive.install import claude, codex, cursor, gemini, git_hooks, owned
from gitive.install import state as st
from gitive.install.base import Target
from gitive.install.repo import locate

HARNESSES: dict[str, ModuleType] = {m.NAME: m for m in (claude, codex, cursor, gemini)}
DEFAULT_HARNESSES = ("claude", "codex", "cursor")


class Report(NamedTuple):
    repository: str
    files: list[dict[str, Any]]  # {path, owner, holds, outcome}
    git_hooks: dict[str, Any] | None  # installed: {dir, hooks: {hook: path}}; uninstalled: {removed: [...]}
    steps: tuple[str, ...] = ()  # what the user still has to do in a harness for its hooks to run

    def as_dict(self) -> dict[str, Any]:
        return self._asdict()


def harness_names(text: str) -> list[str]:
    """``"claude,codex"`` -> ``["claude", "codex"]``.

    Raises:
        GitiveError: a name is not a harness gitive knows.
    """
    names = [n.strip().lower() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in HARNESSES]
    if unknown:
        raise GitiveError(f"unknown harness {', '.join(unknown)}; choose from {', '.join(HARNESSES)}")
    return list(dict.fromkeys(names))


def targets(harnesses: Iterable[str]) -> list[Target]:
    return [t for name in harnesses for t in HARNESSES[name].targets()]


def install(path: Path | str | None, harnesses: Iterable[str], hooks: bool, python: str) -> Report:
    """Write the chosen harnesses' hooks and MCP entries and, with ``hooks``, the git hooks; idempotent.

    Every file is read and planned first: if any cannot be read (invalid JSON or TOML, a hook that cannot
    be moved), nothing at all is written. ``python`` is the interpreter the git hooks will run.

    Raises:
        NotARepository: ``path`` is not in a git work tree.
        GitiveError: a file cannot be read, or a hook cannot be placed; nothing was written.
    """
    loc = locate(path)
    state = st.load(loc.git_dir)
    plans = [owned.plan(t, loc.toplevel / t.path, loc.toplevel, state["files"].get(t.path))
             for t in targets(harnesses)]
    slots = git_hooks.plan(loc) if hooks else None
    files = []
    for p in plans:
        changed = owned.apply(p)
        state["files"][p.target.path] = p.record
        files.append({"path": p.target.path, "owner": p.target.owner, "holds": list(p.target.holds),
                      "outcome": "written" if changed else "unchanged"})
    report_hooks = None
    if slots is not None:
        state["git_hooks"] = git_hooks.install(loc, slots, python, state.get("git_hooks"))
        report_hooks = {"dir": str(loc.hooks_dir), "hooks": state["git_hooks"]["slots"],
                        "chained": {s.hook: str(s.move) for s in slots if s.move is not None}}
    st.save(loc.git_dir, state)
    steps = tuple(HARNESSES[name].TRUST_STEP for name in dict.fromkeys(harnesses)
                  if getattr(HARNESSES[name], "TRUST_STEP", None))
    return Report(str(loc.toplevel), files, report_hooks, steps)


def uninstall(path: Path | str | None, harnesses: Iterable[str] | None, hooks: bool) -> Report:
    """Undo what install recorded: every file (or only the chosen harnesses') and, with ``hooks``, the git
    hooks. A file left as install wrote it gets its original bytes back (or is deleted with the directories
    install created); a file edited since loses only our entries.

    Raises:
        NotARepository: ``path`` is not in a git work tree.
    """
    loc = locate(path)
    state = st.load(loc.git_dir)
    known = {t.path: t for t in targets(HARNESSES)}
    chosen = set(harnesses) if harnesses is not None else set(HARNESSES)
    files = []
    for rel, record in sorted(state["files"].items()):
        if record.get("owner") not in chosen or rel not in known:
            continue
        outcome = owned.revert(known[rel], loc.toplevel / rel, loc.toplevel, record)
        del state["files"][rel]
        files.append({"path": rel, "owner": record["owner"], "holds": list(known[rel].holds), "outcome": outcome})
    report_hooks = None
    if hooks:
        record = state.pop("git_hooks", None)
        kept_for = [str(p) for p in git_hooks.sharers(loc, record)] if record else []
        report_hooks = {"dir": str(loc.hooks_dir), "removed": git_hooks.uninstall(loc, record), "kept_for": kept_for}
    st.save(loc.git_dir, state)
    return Report(str(loc.toplevel), files, report_hooks)
