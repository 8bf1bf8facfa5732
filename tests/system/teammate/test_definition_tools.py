"""A project agent definition shapes a real teammate: checked in what the fake Messages API
server received (its tools and system prompt), with a broken definition file next to it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.agent_fixtures import Crew
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.helpers import wait_until

# These tests are about what project configuration does: the project is trusted.
pytestmark = pytest.mark.usefixtures("trust_projects")

READER = """---
name: reader
description: Reads and searches, never changes anything
tools: [Read, Grep]
---
You are READER-7, a careful reader of code. Quote file names exactly.
"""
BROKEN = """---
disallowed_tools: [Bash, Grpe]
---
This one has a typo in the tools it must not have: loading it would allow Grep.
"""
TEAM_TOOLS = {"SendMessage", "TaskCreate", "TaskList", "TaskGet", "TaskUpdate"}
SUBAGENT_TOOLS = {"Agent", "AgentStatus", "AgentStop"}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    agents = root / ".swarm" / "agents"
    agents.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (agents / "reader.md").write_text(READER)
    (agents / "broken.md").write_text(BROKEN)
    (root / "src").mkdir()
    return root


def test_agents_list_survives_the_broken_file(crew: Crew, repo: Path) -> None:
    proc = crew.cli("agents", "list", "--cwd", str(repo / "src"), "--json")
    assert proc.returncode == 0, proc.stderr
    listed = {d["name"]: d for d in json.loads(proc.stdout)}
    assert {"general-purpose", "explore", "plan", "reader"} <= set(listed)
    assert "broken" not in listed
    assert listed["reader"]["source"] == "project" and listed["reader"]["tools"] == ["Read", "Grep"]
    (warning,) = [line for line in proc.stderr.splitlines() if line.strip()]
    assert warning.startswith(
        f"swarm: warning: {repo / '.swarm/agents/broken.md'}: field 'disallowed_tools'")
    assert "'Grpe'" in warning and "did you mean 'Grep'?" in warning


def test_project_definition_gives_exactly_its_tools_plus_team_tools(
        crew: Crew, repo: Path, fake_api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    fake_api.push_text("Ready to read.")
    proc = crew.cli("spawn", "r1", "--agent-type", "reader", "--model", "sonnet",
                    "--backend", "hidden", "--cwd", str(repo), "--prompt", "What is in src?")
    assert proc.returncode == 0, proc.stderr  # the broken file next to it does not matter
    wait_until(lambda: fake_api.messages_requests(), 15,
               message=f"a model request (log: {crew.log('r1')[-600:]})")
    (request,) = fake_api.messages_requests()

    tools = [t["name"] for t in request["tools"]]
    assert sorted(tools) == sorted({"Read", "Grep", *TEAM_TOOLS})
    assert len(tools) == len(set(tools)) == 7
    (system,) = request["system"]
    assert system["text"].startswith("You are READER-7, a careful reader of code.")
    assert "`r1` (agent id `r1@crew`)" in system["text"]  # the team addendum follows the body
    assert crew.team.member("r1").agent_type == "reader"
    crew.wait_idle_notes("r1", 1)


def test_general_purpose_teammate_gets_every_tool(
        crew: Crew, fake_api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch) -> None:
    """The control for the test above: without a definition narrowing them, all tools."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    crew.spawn("g1", prompt="hello", model="sonnet")
    wait_until(lambda: fake_api.messages_requests(), 15,
               message=f"a model request (log: {crew.log('g1')[-600:]})")
    tools = {t["name"] for t in fake_api.messages_requests()[0]["tools"]}
    assert tools == {"Read", "Write", "Edit", "Bash", "Glob", "Grep", *TEAM_TOOLS,
                     *SUBAGENT_TOOLS}
    crew.wait_idle_notes("g1", 1)


def test_a_claude_code_agent_file_spawns_with_one_warning_per_ignored_key(
        crew: Crew, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    agents = home / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews\ntools: Read, Grep, WebFetch\n"
        "permissionMode: acceptEdits\nmodel: inherit\neffort: high\n---\nYou review.\n")
    proc = crew.cli("spawn", "r", "--agent-type", "reviewer", "--model", "shell",
                    "--backend", "hidden")
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if line.startswith("swarm: warning:")]
    assert len(warnings) == 2, proc.stderr
    assert "field 'tools': unknown tool 'WebFetch' ignored" in warnings[0]
    # its effort is taken; the offline model it runs on cannot think: said once
    assert "effort high: model shell does not think" in warnings[1]
    member = crew.team.member("r")
    assert member.agent_type == "reviewer" and member.permission_mode == "acceptEdits"
