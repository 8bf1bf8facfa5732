"""One-shot built-in agent types (Claude Code's ONE_SHOT_BUILTIN_AGENT_TYPES: Explore, Plan):
explore and plan run once and report; SendMessage to an ended one is refused in one line (a
running one still reads it at its next step), where any other type resumes."""

from __future__ import annotations

from pathlib import Path

import pytest

from swarm.core.store import paths
from swarm.core.team.team import Team
from swarm.runtime.subagents.tools import AgentTool
from swarm.runtime.tools.base import ToolContext, ToolResult, run_tool
from swarm.runtime.tools.team_tools import SendMessage
from tests.support.helpers import wait_until
from tests.support.subagent_host import FnModel, Host, ask, runner_with, text


@pytest.fixture
def host(team: Team, tmp_path: Path) -> Host:
    return Host(team, tmp_path)


def send(host: Host, runner: object, to: str) -> ToolResult:
    ctx = ToolContext(team=host.team, name="alice", cwd=host.cwd, subagents=runner)  # type: ignore[arg-type]
    return run_tool(SendMessage(), {"to": to, "message": "and the tests?"}, ctx)


@pytest.mark.parametrize("kind", ["explore", "plan"])
def test_an_ended_one_shot_subagent_is_not_resumed(
        host: Host, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    model = FnModel(text("the answer"), text("again"))
    runner = runner_with(host, monkeypatch, model)
    assert runner.start(ask(kind)).content.startswith("the answer\n\n")
    said = send(host, runner, "alice.sub-1")
    assert said.is_error
    assert said.content == (f"alice.sub-1 ({kind}) is one-shot: it ran once and reported, and"
                            " is not resumed; start a new one with what it should do")
    assert len(model.requests) == 1 and not runner.has_arrivals()
    assert f"alice.sub-1 [completed] {kind}" in runner.status(None).content


def test_other_types_resume(host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    runner = runner_with(host, monkeypatch, FnModel(text("the answer"), text("the tests pass")))
    runner.start(ask("code-reviewer"))
    resumed = send(host, runner, "alice.sub-1")
    assert not resumed.is_error and resumed.content.startswith("resumed alice.sub-1")
    wait_until(runner.has_arrivals, 10)


def test_an_overriding_definition_of_the_name_is_not_one_shot(
        host: Host, monkeypatch: pytest.MonkeyPatch) -> None:
    """One-shot is a property of the built-ins: a user's `explore` is their own agent."""
    agents = paths.user_agents_dir()
    agents.mkdir(parents=True, exist_ok=True)
    (agents / "explore.md").write_text("---\nname: explore\n---\nYou explore and write.\n")
    runner = runner_with(host, monkeypatch, FnModel(text("the answer"), text("more")))
    runner.start(ask("explore"))
    assert send(host, runner, "alice.sub-1").content.startswith("resumed alice.sub-1")
    wait_until(runner.has_arrivals, 10)


def test_the_agent_tool_says_so() -> None:
    assert "`explore` and `plan` are one-shot" in AgentTool.description
