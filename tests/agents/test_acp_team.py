"""A mixed team finishes a task list: one native agent CLI teammate (Claude Code, on the fake
Anthropic API), two ACP teammates (Qwen Code and OpenCode, on one fake OpenAI server, each
answered by its own route) and a `shell` teammate, each with a task of its own."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from swarm.core.team.team import Team
from tests.support.acp_support import OPENCODE, QWEN, Agent, ok, push_swarm_call
from tests.support.agent_clis import cli_home, cli_path
from tests.support.cli_teammate_steps import end_members
from tests.support.fake_anthropic import FakeAnthropic
from tests.support.fake_openai import FakeOpenAI
from tests.support.helpers import children_with, wait_until
from tests.support.hub_client import hubs, registered_hashes, tokens_in_files

TEAM = "alpha"


def mine(name: str) -> Any:
    return lambda body: f"You are `{name}`" in json.dumps(body)


def script_task(route: Any, agent: Agent | None, task: str, name: str) -> None:
    """Complete task `task`, tell the lead, end the turn (in this agent's tool names)."""
    update = {"task_id": task, "status": "completed", "result": f"done by {name}"}
    message = {"to": "team-lead", "message": f"task {task} done", "summary": "done"}
    if agent is None:  # Claude Code
        route.push_tool_use("mcp__swarm__TaskUpdate", update)
        route.push_tool_use("mcp__swarm__SendMessage", message)
    else:
        push_swarm_call(route, agent, "TaskUpdate", update)
        push_swarm_call(route, agent, "SendMessage", message)
    route.push_text(f"Task {task} finished.")


@pytest.fixture
def team_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
             ) -> Iterator[tuple[FakeAnthropic, FakeOpenAI]]:
    exes = [cli_path(n) for n in ("claude", "qwen-code", "opencode")]
    monkeypatch.setenv("PATH", os.pathsep.join([*(str(e.parent) for e in exes),
                                                os.environ["PATH"]]))
    monkeypatch.setenv("HOME", str(cli_home(tmp_path, "team")))
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    monkeypatch.chdir(project)
    monkeypatch.setenv("SWARM_TEAM", TEAM)
    with FakeAnthropic() as anthropic, FakeOpenAI(required_api_key="test-key") as openai:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        monkeypatch.setenv("OPENAI_BASE_URL", openai.api_url)
        monkeypatch.setenv("OPENAI_MODEL", "gpt-fake")
        monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
        ok("team", "create", TEAM)
        yield anthropic, openai
        end_members(TEAM, lambda pid: children_with(pid, lambda argv: True))


def test_a_native_cli_two_acp_agents_and_a_shell_teammate_finish_a_task_list(
        team_env: tuple[FakeAnthropic, FakeOpenAI]) -> None:
    anthropic, openai = team_env
    project = Path.cwd()
    script_task(anthropic.route(mine("cc")), None, "1", "cc")
    script_task(openai.route(mine("qw")), QWEN, "2", "qw")
    script_task(openai.route(mine("oc")), OPENCODE, "3", "oc")
    ok("spawn", "cc", "--agent", "claude-code", "--backend", "hidden")
    ok("spawn", "qw", "--agent", QWEN.kind, "--backend", "hidden")
    ok("spawn", "oc", "--agent", OPENCODE.kind, "--backend", "hidden")
    ok("spawn", "sh", "--model", "shell", "--backend", "hidden",
       "--allow", "Bash(echo four > four.txt)")
    # The task list, each task assigned to one of them.
    for task, owner in (("1", "cc"), ("2", "qw"), ("3", "oc")):
        ok("tasks", "add", f"task {task}", "--owner", owner, "--description", "finish it")
    ok("tasks", "add", "task 4", "--owner", "sh", "--description", "$ echo four > four.txt")

    def finished() -> bool:
        return all(t.status == "completed" for t in Team(TEAM).tasks.list())

    wait_until(finished, 240, message="every task completed")
    owners = {t.id: (t.owner, t.result) for t in Team(TEAM).tasks.list()}
    assert owners["1"] == ("cc", "done by cc")
    assert owners["2"] == ("qw", "done by qw")
    assert owners["3"] == ("oc", "done by oc")
    assert owners["4"][0] == "sh" and (project / "four.txt").read_text() == "four\n"

    def told() -> set[tuple[str, str]]:
        return {(m.sender, m.text) for m in
                Team(TEAM).inbox("team-lead", checked=False).messages(include_archive=True)}

    reports = {("cc", "task 1 done"), ("qw", "task 2 done"), ("oc", "task 3 done")}
    wait_until(lambda: reports <= told(), 60, message="each CLI teammate reported")
    # One server for the team; the tokens reached the CLIs over pipes, never into a file.
    assert len(hubs()) == 1
    hashes = registered_hashes(TEAM)
    assert len(hashes) == 3
    assert tokens_in_files(project.parent, hashes) == []
