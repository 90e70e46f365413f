"""``gitive skills export``: Agent Skills from verified lessons, proposed on a ``hive/skills-…`` branch."""

from __future__ import annotations

import typer

from gitive.cli.output import console, emit_json

app = typer.Typer(help="Agent Skills built from the team's verified lessons, proposed as a change for review.\n\n"
                       "Example: gitive skills export --harness claude", no_args_is_help=True)


@app.command("export")
def export_cmd(
    harness: list[str] = typer.Option(["claude"], "--harness", help="claude (.claude/skills), codex or agents "
                                      "(.agents/skills), cursor, gemini; repeatable."),
    base: str = typer.Option("HEAD", "--base", help="The branch or commit the change is made against."),
    force: bool = typer.Option(False, "--force", help="Also replace or remove generated skills someone edited."),
    as_json: bool = typer.Option(False, "--json", help="Print what changed as JSON."),
) -> int:
    """Write one SKILL.md per project and topic of verified lessons as a commit on hive/skills-<harness>.

    Nothing touches your working tree or a shared branch: review the branch and merge it like any change.
    Skills whose lessons were superseded or retracted are removed, and the output says what changed.

    Example: gitive skills export --harness claude --harness codex --base main
    """
    from gitive.index.refresh import fresh_index
    from gitive.learn.skills import export
    from gitive.team.hive import open_hive

    hive = open_hive()
    with fresh_index(hive) as (conn, _):
        done = export(hive, conn, harness, base, force)
    if as_json:
        emit_json([{"harness": d.harness, "directory": d.root, "branch": d.branch, "commit": d.commit,
                    "base": d.base, "moved": d.moved, "changes": [c._asdict() for c in d.changes]} for d in done])
        return 0
    for d in done:
        console.print(f"{d.harness} ({d.root}):")
        for c in d.changes:
            extra = (f" (+{len(c.added)} lessons)" if c.added else "") + "".join(
                f"\n      - {lesson[:12]} {why}" for lesson, why in c.removed)
            console.print(f"  {c.what:>10} {c.name}{extra}")
        if d.branch is None:
            console.print("  nothing to propose: the base already has these skills")
        elif not d.moved:
            console.print(f"  {d.branch} already proposes exactly this change")
        else:
            short = d.branch.removeprefix("refs/heads/")
            console.print(f"  proposed on {short} ({d.commit[:12]} over {d.base[:12]}): review with "
                          f"`git diff {d.base[:12]} {short}`, then merge it or push it for a pull request")
    return 0
