"""MCP configuration: .mcp.json / $SWARM_HOME/mcp.json, definitions' mcp_servers, spawn --mcp,
tool names, and turning results into tool text. No server processes here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swarm.core.agents.definitions import get_definition, load_definitions
from swarm.core.shell.rules import check, validate_rule
from swarm.core.store import paths
from swarm.core.team.team import Team
from swarm.core.trust.mcp_config import McpServerSpec, load_mcp_config, resolve_servers
from swarm.errors import BadInputError
from swarm.ops.member.spawner import SpawnRequest, spawn
from swarm.runtime.extensions.mcp_client import qualified_name, result_text

# These tests are about what project configuration does: the project is trusted.
pytestmark = pytest.mark.usefixtures("trust_projects")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "sub").mkdir()
    return root


def write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_user_and_project_servers_merge_and_the_project_wins(project: Path) -> None:
    write_json(paths.user_mcp_config(), {"mcpServers": {
        "calc": {"command": "user-calc"}, "web": {"url": "http://127.0.0.1:9/mcp"}}})
    write_json(project / ".mcp.json", {"mcpServers": {
        "calc": {"command": "python", "args": ["calc.py"], "env": {"K": "v"}}}})
    config = load_mcp_config(project / "sub")
    assert config.problems == []
    assert list(config.servers) == ["calc", "web"]
    calc = config.servers["calc"]
    assert (calc.spec.command, calc.spec.args, calc.spec.env) == ("python", ["calc.py"], {"K": "v"})
    assert calc.source == str(project / ".mcp.json")
    assert config.servers["web"].spec.transport == "http"
    assert config.files == [str(paths.user_mcp_config()), str(project / ".mcp.json")]


def test_a_bad_entry_is_one_problem_naming_file_and_field_and_the_rest_load(project: Path) -> None:
    write_json(project / ".mcp.json", {"mcpServers": {
        "ok": {"command": "x"},
        "both": {"command": "x", "url": "http://h"},
        "neither": {"args": ["a"]},
        "typo": {"comand": "x"},
        "bad name": {"command": "x"},
        "notobj": "x",
        "sse": {"type": "sse", "url": "http://h"},
    }})
    config = load_mcp_config(project)
    assert list(config.servers) == ["ok"]
    where = str(project / ".mcp.json")
    assert all(p.path == where for p in config.problems)
    fields = [p.field for p in config.problems]
    assert fields[:2] == ["mcpServers.both", "mcpServers.neither"]
    assert "mcpServers.typo.comand" in fields and "mcpServers.bad name" in fields
    assert "mcpServers.notobj" in fields and "mcpServers.sse.type" in fields
    assert "either `command`" in str(config.problems[0])


def test_malformed_json_is_one_problem_and_the_other_file_still_loads(project: Path) -> None:
    paths.user_mcp_config().parent.mkdir(parents=True, exist_ok=True)
    paths.user_mcp_config().write_text("{not json")
    write_json(project / ".mcp.json", {"mcpServers": {"calc": {"command": "x"}}})
    config = load_mcp_config(project)
    assert list(config.servers) == ["calc"]
    assert len(config.problems) == 1 and "not valid JSON" in str(config.problems[0])
    assert str(paths.user_mcp_config()) in str(config.problems[0])


def test_mcp_servers_must_be_an_object(project: Path) -> None:
    write_json(project / ".mcp.json", {"mcpServers": ["calc"]})
    config = load_mcp_config(project)
    assert config.servers == {} and [p.field for p in config.problems] == ["mcpServers"]


def test_variables_expand_from_the_agents_environment_with_defaults() -> None:
    spec = McpServerSpec(command="srv", args=["--token", "${TOKEN}", "${MODE:-fast}"],
                         env={"HOME_DIR": "${HOME_DIR}", "MISSING": "${NOPE}"})
    expanded, missing = spec.expanded({"TOKEN": "t0k", "HOME_DIR": "/h"})
    assert expanded.args == ["--token", "t0k", "fast"]
    assert expanded.env == {"HOME_DIR": "/h", "MISSING": ""}
    assert missing == ["NOPE"]
    assert spec.describe() == "srv --token ${TOKEN} ${MODE:-fast}"  # listings never show secrets


def test_definitions_take_mcp_servers_by_name_or_inline_in_either_spelling(project: Path) -> None:
    agents = project / ".swarm" / "agents"
    agents.mkdir(parents=True)
    (agents / "calc-user.md").write_text(
        "---\nmcpServers:\n  - calc\n  - local:\n      command: python\n      args: [s.py]\n---\nHi\n")
    (agents / "mapped.md").write_text("---\nmcp_servers:\n  web: {url: 'http://h/mcp'}\n---\n")
    (agents / "broken.md").write_text("---\nmcp_servers:\n  - bad: {args: [x]}\n---\n")
    loaded = load_definitions(project)
    calc = loaded.definitions["calc-user"]
    assert calc.mcp_servers[0] == "calc"
    inline = calc.mcp_servers[1]
    assert isinstance(inline, dict) and inline["local"].command == "python"
    mapped = loaded.definitions["mapped"].mcp_servers[0]
    assert isinstance(mapped, dict) and mapped["web"].url == "http://h/mcp"
    assert "broken" not in loaded.definitions
    [problem] = [p for p in loaded.problems if p.path.endswith("broken.md")]
    assert problem.field == "mcp_servers" and "server 'bad'" in problem.message
    assert get_definition("general-purpose", project).mcp_servers == []


def test_definitions_may_disallow_mcp_tools(project: Path) -> None:
    agents = project / ".swarm" / "agents"
    agents.mkdir(parents=True)
    (agents / "a.md").write_text("---\ndisallowed_tools: [mcp__calc__add, Bash]\n---\n")
    assert get_definition("a", project).disallowed_tools == ["mcp__calc__add", "Bash"]


def test_an_agents_servers_resolve_by_name_and_inline_and_unknown_names_are_reported(
        project: Path) -> None:
    write_json(project / ".mcp.json", {"mcpServers": {"calc": {"command": "x"}}})
    config = load_mcp_config(project)
    inline = {"local": McpServerSpec(command="y")}
    chosen, problems = resolve_servers(["calc", "ghost"], [inline], config)
    assert list(chosen) == ["local", "calc"]
    assert chosen["local"].source == "agent definition"
    assert len(problems) == 1 and "ghost" in problems[0] and "calc" in problems[0]


def test_spawn_mcp_checks_the_name_and_records_it_on_the_member(project: Path) -> None:
    write_json(project / ".mcp.json", {"mcpServers": {"calc": {"command": "x"}}})
    team = Team.create("t")
    with pytest.raises(BadInputError, match="unknown MCP server 'ghost'.*configured: calc"):
        spawn(team, SpawnRequest("bob", cwd=str(project), mcp=("ghost",), model="shell",
                                 backend="hidden"))
    assert team.config().member("bob") is None  # nothing registered
    member = team.add_member("carl", mcp_servers=["calc"])
    assert Team.open("t").member("carl").mcp_servers == ["calc"] == member.mcp_servers


def test_tool_names_are_qualified_and_safe_for_the_api() -> None:
    taken: set[str] = set()
    assert qualified_name("calc", "add", taken) == "mcp__calc__add"
    assert qualified_name("calc", "do.it now", taken) == "mcp__calc__do_it_now"
    long = qualified_name("server", "x" * 100, taken)
    assert len(long) == 64 and long.startswith("mcp__server__xxx")
    clash = qualified_name("calc", "add", {"mcp__calc__add"})
    assert clash != "mcp__calc__add" and clash.startswith("mcp__calc__add_")


def test_results_become_tool_text() -> None:
    assert result_text({"content": [{"type": "text", "text": "5"}],
                        "structuredContent": {"result": 5}}).text == "5"
    only = result_text({"content": [], "structuredContent": {"sum": 5}})
    assert only.text == '{"sum": 5}' and not only.is_error
    error = result_text({"content": [{"type": "text", "text": "boom"}], "isError": True})
    assert error.is_error and error.text == "boom"
    mixed = result_text({"content": [
        {"type": "image", "data": "AAAA", "mimeType": "image/png"},
        {"type": "resource", "resource": {"uri": "file:///a", "text": "body"}},
        {"type": "resource_link", "uri": "file:///b", "name": "b"}]})
    assert mixed.text.splitlines() == ["[image: image/png, 3 bytes]", "body",
                                       "[resource link: file:///b (b)]"]
    assert result_text({"content": []}).text == "(no output)"


def test_permission_rules_name_mcp_tools_by_server_or_pattern(tmp_path: Path) -> None:
    def decide(mode: str, allow: list[str], deny: list[str] = []) -> str:  # noqa: B006
        return check("mcp__calc__add", {"a": 2}, mode=mode, read_only=False, edits_files=False,
                     cwd=tmp_path, allow=allow, deny=deny).behavior

    for rule in ("mcp__calc__*", "mcp__calc__add", "mcp__calc", "mcp__calc__add"):
        assert validate_rule(rule) == rule
    assert decide("default", []) == "ask"
    assert decide("acceptEdits", []) == "ask"
    assert decide("plan", []) == "deny"
    assert decide("bypassPermissions", []) == "allow"
    assert decide("default", ["mcp__calc__*"]) == "allow"
    assert decide("default", ["mcp__calc"]) == "allow"
    assert decide("default", ["mcp__calc__add"]) == "allow"
    assert decide("default", ["mcp__calc__sub"]) == "ask"
    assert decide("default", ["mcp__cal"]) == "ask"
    assert decide("default", ["mcp__other__*"]) == "ask"
    assert decide("bypassPermissions", [], deny=["mcp__calc__*"]) == "deny"
