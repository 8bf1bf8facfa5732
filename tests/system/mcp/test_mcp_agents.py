"""MCP servers in real `swarm agent` processes: a `scripted:` teammate calls a real stdio server's
`add` tool; permission modes and rules apply; the server is gone after the teammate exits, and
after it is SIGKILLed; a server that cannot start is one warning and the teammate runs on."""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Any

import pytest

from swarm.core.records.protocol import PermissionRequest
from tests.support.agent_fixtures import Crew
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.helpers import process_gone, wait_until
from tests.support.mcp_fixtures import calc_spec, pids

# The project (.mcp.json) is trusted: these tests are about what its servers do.
pytestmark = pytest.mark.usefixtures("trust_projects")

APPROVE_SHUTDOWN = {"tool_uses": [{"name": "SendMessage", "input": {
    "to": "team-lead", "message": {"type": "shutdown_response", "approve": True}}}]}


def configure(crew: Crew, tmp_path: Path, **extra: dict[str, Any]) -> Path:
    """`calc` in the project's .mcp.json (the teammate's cwd is a git repository)."""
    pidfile = tmp_path / "server-pids"
    (crew.workdir / ".git").mkdir(exist_ok=True)
    servers = {"calc": calc_spec(tmp_path, pidfile).model_dump(exclude_defaults=True), **extra}
    (crew.workdir / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    return pidfile


def script(crew: Crew, turns: list[dict[str, Any]], name: str = "script.json") -> str:
    (crew.workdir / name).write_text(json.dumps(turns))
    return f"scripted:{name}"


def add_turns() -> list[dict[str, Any]]:
    return [{"tool_uses": [{"name": "mcp__calc__add", "input": {"a": 2, "b": 3}}]},
            {"text": "added"}, APPROVE_SHUTDOWN, {"text": "bye"}]


def results(crew: Crew, name: str) -> list[dict[str, Any]]:
    return [b for e in crew.transcript(name) if e["kind"] == "message"
            for b in e["message"]["content"] if b.get("type") == "tool_result"]


def test_a_scripted_teammate_calls_add_and_the_server_ends_with_it(crew: Crew, tmp_path: Path) -> None:
    pidfile = configure(crew, tmp_path)
    crew.spawn("adder", prompt="add 2 and 3", model=script(crew, add_turns()), mcp=("calc",))
    crew.wait_idle_notes("adder", 1, timeout=60)
    [result] = results(crew, "adder")
    assert result["content"] == "5" and not result.get("is_error")
    [server] = pids(pidfile)
    assert not process_gone(server)
    assert crew.cli("shutdown", "adder", "--timeout", "30").returncode == 0
    assert crew.exit_code("adder") == 0
    wait_until(lambda: process_gone(server), 15, message="the MCP server to end with its teammate")


def test_the_server_is_gone_after_a_sigkill_of_the_teammate(crew: Crew, tmp_path: Path) -> None:
    pidfile = configure(crew, tmp_path)
    crew.spawn("adder", prompt="add", model=script(crew, add_turns()), mcp=("calc",))
    crew.wait_idle_notes("adder", 1, timeout=60)
    [server] = pids(pidfile)
    crew.procs["adder"].send_signal(signal.SIGKILL)
    crew.procs["adder"].wait(10)
    wait_until(lambda: process_gone(server), 15, message="the MCP server to die with its teammate")


def test_mcp_tools_go_through_permission_modes_and_rules(crew: Crew, tmp_path: Path) -> None:
    configure(crew, tmp_path)
    # default mode with a rule: allowed without asking
    crew.spawn("ruled", prompt="add", model=script(crew, add_turns(), "a.json"), mcp=("calc",),
               permission_mode="default", allow=("mcp__calc__*",))
    # default mode, no rule: it asks the lead; the lead says no
    crew.spawn("asker", prompt="add", model=script(crew, add_turns(), "b.json"), mcp=("calc",),
               permission_mode="default")

    def request() -> PermissionRequest | None:
        found = [s for m in crew.lead_messages() if isinstance(s := m.structured(), PermissionRequest)]
        return found[0] if found else None

    asked = wait_until(request, 60, message=f"a permission request (log: {crew.log('asker')})")
    assert asked.tool_name == "mcp__calc__add" and asked.agent_id.startswith("asker@")
    deny = crew.cli("permissions", "deny", asked.request_id, "--reason", "not today")
    assert deny.returncode == 0, deny.stderr
    crew.wait_idle_notes("asker", 1, timeout=60)
    crew.wait_idle_notes("ruled", 1, timeout=60)
    assert [r["content"] for r in results(crew, "ruled")] == ["5"]
    [denied] = results(crew, "asker")
    assert denied["is_error"] is True and "not today" in denied["content"]
    assert all(r.agent_id.startswith("asker@") for m in crew.lead_messages()
               if isinstance(r := m.structured(), PermissionRequest))


def test_a_server_that_cannot_start_is_one_warning_and_the_teammate_runs_on(
        crew: Crew, tmp_path: Path) -> None:
    configure(crew, tmp_path, ghost={"command": "no-such-mcp-server-xyz"})
    crew.spawn("bob", prompt="$ echo alive", mcp=("ghost",))
    crew.wait_idle_notes("bob", 1, timeout=60)
    log = crew.log("bob")
    assert log.count("MCP server 'ghost'") == 1
    assert "command not found: no-such-mcp-server-xyz" in log
    assert any("alive" in m.text for m in crew.lead_messages() if m.sender == "bob")


def test_a_server_dying_mid_call_is_a_tool_error_and_the_teammate_goes_on(
        crew: Crew, tmp_path: Path) -> None:
    configure(crew, tmp_path)
    turns = [{"tool_uses": [{"name": "mcp__calc__die", "input": {}}]},
             {"tool_uses": [{"name": "Bash", "input": {"command": "echo after"}}]},
             {"text": "carried on"}]
    crew.spawn("bob", prompt="go", model=script(crew, turns), mcp=("calc",))
    notes = crew.wait_idle_notes("bob", 1, timeout=60)
    died, after = results(crew, "bob")
    assert died["is_error"] is True and "calc" in died["content"]
    assert after["content"].strip() == "after"
    assert notes[0].idle_reason == "available" and notes[0].summary == "carried on"


def test_a_definitions_mcp_servers_inline(crew: Crew, tmp_path: Path) -> None:
    (crew.workdir / ".git").mkdir()
    agents = crew.workdir / ".swarm" / "agents"
    agents.mkdir(parents=True)
    spec = calc_spec(tmp_path)
    (agents / "calculator.md").write_text(
        "---\nmcpServers:\n  - calc:\n      command: " + json.dumps(spec.command)
        + "\n      args: " + json.dumps(spec.args) + "\n---\nYou add numbers.\n")
    crew.spawn("adder", prompt="add", model=script(crew, add_turns()), agent_type="calculator")
    crew.wait_idle_notes("adder", 1, timeout=60)
    assert [r["content"] for r in results(crew, "adder")] == ["5"]


def test_the_model_gets_the_tools_with_their_json_schemas(
        crew: Crew, tmp_path: Path, fake_api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the real Anthropic SDK (against the local fake API)."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    configure(crew, tmp_path)
    use_id = fake_api.push_tool_use("mcp__calc__add", {"a": 2, "b": 3})
    fake_api.push_text("2 + 3 = 5")
    crew.spawn("adder", prompt="add 2 and 3", model="sonnet", mcp=("calc",))
    crew.wait_idle_notes("adder", 1, timeout=120)
    first, second = fake_api.messages_requests()
    tools = {t["name"]: t for t in first["tools"]}
    assert {"mcp__calc__add", "mcp__calc__fail", "mcp__calc__die", "mcp__calc__nap"} <= set(tools)
    add = tools["mcp__calc__add"]
    assert add["description"] == "Add two integers."
    assert add["input_schema"]["type"] == "object"
    assert add["input_schema"]["required"] == ["a", "b"]
    assert {k: v["type"] for k, v in add["input_schema"]["properties"].items()} == {
        "a": "integer", "b": "integer"}
    [result] = second["messages"][-1]["content"]
    assert (result["tool_use_id"], result["content"]) == (use_id, "5")
