"""``gitive mcp``: the command harnesses run (``.mcp.json`` says ``"command": "gitive", "args": ["mcp"]``)."""

from __future__ import annotations

import sys
from pathlib import Path

import mcp.client.stdio  # noqa: F401 - bind its errlog default to the real stderr before any test redirects it
import pytest

from gitive.cli import main
from gitive.mcp.table import TOOLS as TABLE
from testing.machines import run_cli
from tests.mcp.conftest import Team, server_env
from tests.mcp.test_server import TOOLS

GITIVE = Path(sys.executable).with_name("gitive")


def _registered() -> bool:
    main._register()
    return any(command.name == "mcp" for command in main.app.registered_commands)


needs_command = pytest.mark.skipif(not _registered(),
                                   reason="`gitive mcp` is not registered in gitive.cli.main yet")


@needs_command
def test_tools_option_lists_the_tools_with_schemas(team: Team) -> None:
    result = run_cli(["mcp", "--tools", "--json"], team.alice.clone, {"GITIVE_HOME": str(team.alice.home)})
    assert result.code == 0, str(result)
    listed = result.json()
    assert {t["name"] for t in listed} == TOOLS
    assert [t["name"] for t in listed if not t["read_only"]] == ["propose_lesson", "owe", "send_message",
                                                                 "check_inbox", "claim_files", "propose_item"]
    assert all(t["input_schema"]["type"] == "object" and t["output_schema"]["type"] == "object" for t in listed)
    assert all(t["title"] for t in listed)


@needs_command
def test_tools_option_prints_one_line_each(team: Team) -> None:
    result = run_cli(["mcp", "--tools"], team.alice.clone, {"GITIVE_HOME": str(team.alice.home)})
    assert result.code == 0, str(result)
    assert [line.split(" ")[0].rstrip(":") for line in result.out.splitlines()] == [t.name for t in TABLE]


@needs_command
@pytest.mark.anyio
async def test_the_gitive_mcp_command_serves_over_stdio(team: Team) -> None:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=str(GITIVE), args=["mcp"], env=server_env(team.alice),
                                   cwd=str(team.alice.clone))
    async with Client(params, read_timeout_seconds=60) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        found = await client.call_tool("get_lesson", {"id": team.session_lesson[:12]})
    assert names == TOOLS
    assert not found.is_error and found.structured_content["verified"]


@needs_command
@pytest.mark.anyio
@pytest.mark.parametrize("args", [["mcp", "--repo", "{clone}"], ["mcp", "--repo={clone}"]])
async def test_gitive_mcp_with_a_repo_serves_it_from_anywhere(team: Team, tmp_path: Path, args: list[str]) -> None:
    """Cursor's global config starts ``gitive mcp --repo ${workspaceFolder}`` outside the project; the first form
    goes straight to the front, the second through the CLI, and both serve the named repository."""
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=str(GITIVE), args=[a.format(clone=team.alice.clone) for a in args],
                                   env=server_env(team.alice), cwd=str(tmp_path))
    async with Client(params, read_timeout_seconds=60, mode="legacy") as client:
        found = await client.call_tool("get_lesson", {"id": team.proto_lesson[:12]})
    assert not found.is_error and found.structured_content["id"] == team.proto_lesson
