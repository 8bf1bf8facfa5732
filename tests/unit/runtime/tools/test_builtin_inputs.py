"""Tool inputs (docs/design/tool-inputs.md): bad input from a model (a missing field, a wrong
type) is one error result naming every problem, never an exception into the loop: nothing runs
and nobody is asked about the call. An unknown field is ignored, and hooks and permission rules
see the input as the model sent it. An input edited when approving is validated too. A tool of
an external MCP server has no model: its input is passed on as sent."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest

from swarm.core.records.permissions import Decision
from swarm.core.team.team import Team
from swarm.lead.lead_tools import lead_tools
from swarm.runtime.extensions.mcp_client import McpManager, McpTool, McpToolAdapter
from swarm.runtime.tools.base import Tool, ToolContext, ToolResult, run_tool
from swarm.runtime.tools.registry import all_tools
from swarm.runtime.turn.hooks import LoopHooks
from swarm.runtime.turn.loop import Loop
from tests.support.helpers import OneCall


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    team = Team.create("inputs")
    team.add_member("w1")
    work = tmp_path / "work"
    work.mkdir()
    return ToolContext(team=team, name="w1", cwd=work)


class Asking(LoopHooks):
    """Allows every call (with `edited` as the approver's input, if given); records what the
    permission check and the result hook were shown."""

    def __init__(self, edited: dict[str, Any] | None = None) -> None:
        self.edited = edited
        self.asked: list[dict[str, Any]] = []
        self.shown: list[dict[str, Any]] = []

    def check(self, tool: Tool, args: dict[str, Any], use_id: str,
              must_ask: str | None = None) -> Decision:
        self.asked.append(dict(args))
        return Decision("allow", "test", updated_input=self.edited)

    def on_tool_result(self, tool: Tool, args: dict[str, Any], result: ToolResult) -> None:
        self.shown.append(dict(args))


def run_calls(ctx: ToolContext, hooks: Asking, *inputs: dict[str, Any]) -> list[dict[str, Any]]:
    uses = [{"type": "tool_use", "id": f"u{i}", "name": "Write", "input": args}
            for i, args in enumerate(inputs)]
    loop = Loop(model=OneCall(uses), tools=all_tools(), system="s", ctx=ctx, permits=hooks,
                hooks=(hooks,))
    outcome = loop.run([{"type": "text", "text": "go"}])
    assert outcome.reason == "available" and outcome.last_text == "ok"  # the loop went on
    results: list[dict[str, Any]] = loop.messages[2]["content"]
    return results


def test_a_built_in_tool_answers_bad_input_with_one_error_and_ignores_unknown_fields(
        ctx: ToolContext) -> None:
    hooks = Asking()
    extra = {"file_path": "b.txt", "content": "hi", "mode": "append"}
    missing, wrong, ran = run_calls(ctx, hooks, {}, {"file_path": "a.txt", "content": ["x"]},
                                    extra)
    assert missing["is_error"] and missing["content"] == (
        "Invalid input for Write: file_path: Field required; content: Field required")
    assert wrong["is_error"] and wrong["content"] == (
        "Invalid input for Write: content: Input should be a valid string")
    assert not ran.get("is_error") and (ctx.cwd / "b.txt").read_text() == "hi"
    assert sorted(p.name for p in ctx.cwd.iterdir()) == ["b.txt"]
    # Only the call that could run was asked about; rules and hooks saw it as sent.
    assert hooks.asked == [extra]
    assert hooks.shown[-1] == extra


def test_an_input_edited_when_approving_is_validated_before_it_runs(ctx: ToolContext) -> None:
    hooks = Asking(edited={"file_path": "c.txt"})
    (result,) = run_calls(ctx, hooks, {"file_path": "a.txt", "content": "original"})
    assert result["is_error"] and result["content"].endswith(
        "\nInvalid input for Write: content: Field required")
    assert list(ctx.cwd.iterdir()) == []  # neither the edited call nor the original ran


def test_a_lead_tool_answers_bad_input_with_one_error_naming_every_problem(
        ctx: ToolContext) -> None:
    spawn = lead_tools("lead", coordinator=False)["SpawnTeammate"]
    lead = ToolContext(team=ctx.team, name="team-lead", cwd=ctx.cwd)
    missing = run_tool(spawn, {}, lead)
    assert missing.is_error and missing.content == (
        "Invalid input for SpawnTeammate: name: Field required; prompt: Field required")
    wrong = run_tool(spawn, {"name": "bob", "prompt": "p", "worktree": "maybe",
                             "permission_mode": "root"}, lead)
    assert wrong.is_error and wrong.content.startswith("Invalid input for SpawnTeammate: ")
    assert "worktree: Input should be a valid boolean" in wrong.content
    assert ("permission_mode: Input should be 'default', 'acceptEdits', 'plan', 'auto' or"
            " 'bypassPermissions'") in wrong.content
    assert ctx.team.config().member("bob") is None  # nothing was spawned


def test_exact_input_takes_json_types_only_and_no_unknown_field() -> None:
    bash = all_tools()["Bash"]
    assert bash.parse({"command": 5, "colour": "red"}).command == "5"  # a model's: lenient
    for bad, why in [({"command": 5}, "command: Input should be a valid string"),
                     ({"command": "ls", "colour": "red"}, "colour: Extra inputs are not permitted")]:
        with pytest.raises(Exception, match=why):
            bash.parse(bad, exact=True)


def test_an_mcp_servers_tool_passes_its_input_on_as_sent() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "number"}}, "required": ["a"]}
    adapter = McpToolAdapter(cast(McpManager, None),
                             McpTool("calc", "add", "mcp__calc__add", "add", schema), lambda: 5.0)
    assert adapter.input_schema == schema and adapter.spec()["input_schema"] == schema
    sent = {"a": "not a number", "b": [1]}
    assert adapter.parse(sent) is sent  # the server checks it, by its own schema


