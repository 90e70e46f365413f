"""The team's own Outside paths (``outside-paths`` records, v1): an admin adds ``deploy/**`` with a gesture and the
anchor refuses a draft touching it. Against them: a member who is not an admin, a record without a gesture (an
agent with only the machine key), a later format version, and the admin's own record appended again (a replay):
none changes what is Outside, and a replay takes nothing away."""

from __future__ import annotations

from typing import Any

from gitive.anchor.prepared import outside_paths
from testing import prepared as prep
from testing.anchor import AnchoredTeam


def _read(team: AnchoredTeam) -> list[dict[str, Any]]:
    out = team.anchor.ok("standing", "outside", "--json")
    return out.json()["outside"]  # type: ignore[no-any-return]


def _project_id(team: AnchoredTeam) -> str:
    from gitive.team.hive import open_hive
    from gitive.team.projects import project_id
    from testing import live

    with live.on(team.alice):
        return project_id(open_hive(team.alice.clone).project)


def test_an_admins_outside_paths_refuse_a_draft_and_nothing_else_counts(team: AnchoredTeam) -> None:
    prep.buggy_project(team.alice)
    repo = _project_id(team)
    # a member who is not an admin is refused, and nothing is written
    bob = team.bob.decide("standing", "outside", "--add", "deploy/**")
    assert bob.code != 0 and "not an admin" in bob.err, str(bob)
    # an agent with only the machine key, a later format, a bad glob: written, never counted
    team.bob.append({"type": "outside-paths", "v": 1, "repo": repo, "paths": ["src/**"], "created": 1})
    team.alice.append({"type": "outside-paths", "v": 2, "repo": repo, "paths": ["calc.py"], "created": 1})
    done = team.alice.decided("standing", "outside", "--add", "deploy/**", "--json").json()["record"]
    team.alice.ok("sync")
    team.bob.ok("sync")
    team.anchor.ok("sync")
    found = _read(team)
    assert [r["paths"] for r in found if r["counted"]] == [["deploy/**"]], found
    assert {r["problem"].split(" ")[0] for r in found if not r["counted"]} == {"it", "format"}, found
    # a replay of the admin's record adds nothing and takes nothing away
    team.bob.append(dict(done))
    team.bob.ok("sync")
    team.anchor.ok("sync")
    from gitive.index.refresh import fresh_index
    from gitive.team.hive import open_hive
    from testing import live

    with live.on(team.anchor):
        hive = open_hive(team.anchor.clone)
        with fresh_index(hive) as (conn, _):
            assert outside_paths.team_paths(conn, hive.team_id, repo) == ("deploy/**",)
    # the anchor refuses a draft touching it, and pushes nothing
    task = prep.hand(team.alice, f"fix add\n{prep.FIX}\nwrite: deploy/prod.tf: resource")
    prep.ticker(team)()
    last = prep.prepared_records(team.anchor)[-1]
    assert last["state"] == "refused" and "deploy/prod.tf" in last["reason"], last
    from gitive.anchor.prepared.tasks import branch_name

    assert prep.remote_tip(team, f"refs/heads/{branch_name(task)}") is None
    # without it, the same change is drafted: the record is what refused it
    second = prep.hand(team.alice, f"fix add\n{prep.FIX}\nwrite: src/prod.tf: resource")
    prep.ticker(team)()
    assert prep.prepared_records(team.anchor)[-1]["state"] == "drafted"
    assert prep.remote_tip(team, f"refs/heads/{branch_name(second)}") is not None


def test_bad_globs_are_refused_with_one_line(team: AnchoredTeam) -> None:
    prep.buggy_project(team.alice)
    for glob in ("/etc/passwd", "x" * 300):
        bad = team.alice.decide("standing", "outside", "--add", glob)
        assert bad.code == 1 and "cannot be recorded" in bad.err and len(bad.err.strip().splitlines()) == 1, str(bad)
    assert _read(team) == []
