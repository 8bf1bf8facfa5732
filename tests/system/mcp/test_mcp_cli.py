"""`swarm mcp list [--check] [--json]` and `swarm spawn --mcp`, through the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swarm.core.store import paths
from tests.support.agent_fixtures import error_lines
from tests.support.cli_runner import run_swarm
from tests.support.mcp_fixtures import calc_spec

# These tests are about what project configuration does: the project is trusted.
pytestmark = pytest.mark.usefixtures("trust_projects")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


def write_config(path: Path, servers: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"mcpServers": servers}))


def test_list_shows_servers_and_warns_about_a_bad_entry(project: Path) -> None:
    write_config(paths.user_mcp_config(), {"web": {"url": "http://127.0.0.1:9/mcp"}})
    write_config(project / ".mcp.json", {"calc": {"command": "calc-server", "args": ["--x"]},
                                         "broken": {"command": "x", "url": "http://h"}})
    proc = run_swarm("mcp", "list", cwd=project)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["NAME", "TRANSPORT", "TARGET", "SOURCE"]
    assert lines[1].split()[:3] == ["web", "http", "http://127.0.0.1:9/mcp"]
    assert lines[2].split()[:4] == ["calc", "stdio", "calc-server", "--x"]
    [warning] = error_lines(proc)
    assert warning.startswith("swarm: warning: ") and "mcpServers.broken" in warning
    assert str(project / ".mcp.json") in warning

    as_json = json.loads(run_swarm("mcp", "list", "--json", "--cwd", str(project)).stdout)
    assert [s["name"] for s in as_json["servers"]] == ["web", "calc"]
    assert len(as_json["problems"]) == 1


def test_list_with_nothing_configured_says_so(project: Path) -> None:
    proc = run_swarm("mcp", "list", cwd=project)
    assert proc.returncode == 0 and "no MCP servers configured" in proc.stdout


def test_check_starts_each_server_lists_its_tools_and_fails_for_a_broken_one(
        project: Path) -> None:
    write_config(project / ".mcp.json", {
        "calc": calc_spec(project).model_dump(exclude_defaults=True),
        "ghost": {"command": "no-such-server-xyz"}})
    proc = run_swarm("mcp", "list", "--check", cwd=project, timeout=120)
    assert proc.returncode == 1
    assert "mcp__calc__add: Add two integers." in proc.stdout
    rows = {line.split()[0]: line for line in proc.stdout.splitlines()[1:3]}
    assert "ok: 4 tool(s)" in rows["calc"]
    assert "FAILED: command not found: no-such-server-xyz" in rows["ghost"]
    assert error_lines(proc) == ["swarm: error: 1 of 2 MCP server(s) failed the check: ghost"]

    write_config(project / ".mcp.json", {"calc": calc_spec(project).model_dump(exclude_defaults=True)})
    ok = run_swarm("mcp", "list", "--check", "--json", cwd=project, timeout=120)
    assert ok.returncode == 0, ok.stderr
    [calc] = json.loads(ok.stdout)["servers"]
    assert calc["state"] == "running"
    assert {t["qualified"] for t in calc["tools"]} >= {"mcp__calc__add"}


def test_spawn_mcp_with_an_unknown_server_is_exit_2_and_registers_nothing(project: Path) -> None:
    run_swarm("team", "create", "t")
    proc = run_swarm("spawn", "bob", "--team", "t", "--model", "shell", "--backend", "hidden",
                     "--mcp", "ghost", cwd=project)
    assert proc.returncode == 2
    assert error_lines(proc) == ["swarm: error: --mcp: unknown MCP server 'ghost' (configured: "
                                 "none; see `swarm mcp list`)"]
    members = json.loads(run_swarm("team", "show", "t", "--json").stdout)["members"]
    assert [m["name"] for m in members] == ["team-lead"]
