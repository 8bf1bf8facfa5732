"""A small `SubagentHost` and models written in the test, for running the subagent runner
in-process (tests/unit/runtime/subagents/test_runner.py and the tests of Claude Code's subagent rows)."""

from __future__ import annotations

import copy
import subprocess
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import pytest

from swarm.core.records.permissions import Decision
from swarm.core.records.state import SubagentInfo, Usage
from swarm.core.team.team import Team
from swarm.core.trust.workspace import decide
from swarm.errors import TurnInterrupted
from swarm.runtime.models.base import ModelReply, ModelRequest
from swarm.runtime.permissions.policy import PermissionPolicy
from swarm.runtime.subagents import making
from swarm.runtime.subagents.runner import Subagents
from swarm.runtime.subagents.tools import SubagentRequest
from swarm.runtime.tools.base import Tool, ToolContext, ToolResult
from swarm.runtime.turn.hooks import AllowAll, ToolHooks
from swarm.runtime.turn.loop import Loop

T = TypeVar("T")
Reply = Callable[[ModelRequest], ModelReply]


def text(value: str) -> ModelReply:
    return ModelReply([{"type": "text", "text": value}], usage=Usage(input_tokens=10,
                                                                        output_tokens=5))


def tool(name: str, **args: Any) -> ModelReply:
    return ModelReply([{"type": "tool_use", "id": f"toolu_{name}", "name": name, "input": args}],
                      "tool_use", Usage(input_tokens=10, output_tokens=5))


class FnModel:
    name = "fn"

    def __init__(self, *replies: Reply | ModelReply) -> None:
        self.replies = list(replies)
        self.requests: list[ModelRequest] = []

    def complete(self, request: ModelRequest) -> ModelReply:
        # The loop's list grows after the call: keep the messages as they were.
        self.requests.append(replace(request, messages=copy.deepcopy(request.messages)))
        reply = self.replies.pop(0) if self.replies else text("done")
        return reply(request) if callable(reply) else reply


class YesAsker:
    def permission(self, tool: Any, args: Any, use_id: str, why: Decision) -> Decision:
        return Decision("allow", "a person said yes")


class RecordingToolHooks(ToolHooks):
    """Where the host's PostToolUse hooks would run: the calls that ran."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    def post_tool_use(self, tool: Tool, args: dict[str, Any], result: ToolResult,
                      decision: Decision | None) -> ToolResult:
        if decision is not None and decision.behavior == "allow":
            self.ran.append(tool.name)
        return result


class Host:
    """A minimal `SubagentHost`."""

    def __init__(self, team: Team, cwd: Path, mode: str = "default") -> None:
        self.team = team
        self.name = "alice"
        self.cwd = cwd
        self.model_name = "shell"
        self.environment = f"# Environment\nWorking directory: {cwd}"
        self.project = decide(cwd).project  # the project configuration it trusts (here: none)
        member = team.member("alice")
        self.policy = PermissionPolicy(team=team, member=member, cwd=cwd, mode=mode,
                                       working_mode=mode, asker=YesAsker())  # type: ignore[arg-type]
        self.tool_hooks = RecordingToolHooks()  # its subagents' calls come here too
        self.loop = Loop(model=FnModel(), tools={}, system="parent", permits=AllowAll(),
                         tool_hooks=self.tool_hooks,
                         ctx=ToolContext(team=team, name="alice", cwd=cwd))
        self.usage = Usage()
        self.state: dict[str, Any] = {}
        self.lines: list[str] = []
        self.stopped: list[tuple[SubagentInfo, str]] = []
        self.limit: str | None = None
        self.interrupt_after: int | None = None  # interruptible() raises on this call
        self.lacks: set[str] = set()  # tools it does not lend its subagents
        self.depth = 1  # a teammate a person spawned

    def add_usage(self, usage: Usage, turn: bool = True) -> None:
        self.usage.add(usage)

    def interruptible(self, call: Callable[[], T]) -> T:
        if self.interrupt_after is not None:
            self.interrupt_after -= 1
            if self.interrupt_after < 0:
                raise TurnInterrupted()
        return call()

    def set_state(self, **fields: Any) -> None:
        self.state.update(fields)

    def trace(self, line: str) -> None:
        self.lines.append(line)

    def subagent_limit(self) -> str | None:
        return self.limit

    def spend_limit(self, pending: Usage) -> str | None:
        return None

    def subagent_stopped(self, info: SubagentInfo, final_text: str) -> None:
        self.stopped.append((info, final_text))

    def mcp_tools(self) -> dict[str, Tool]:
        return {}

    def lends(self, tool_name: str) -> bool:
        return tool_name not in self.lacks



def runner_with(host: Host, monkeypatch: pytest.MonkeyPatch, model: FnModel) -> Subagents:
    monkeypatch.setattr(making, "load_model", lambda *a, **k: model)
    return Subagents(host)  # type: ignore[arg-type]


def ask(kind: str | None = "general-purpose", **fields: Any) -> SubagentRequest:
    fields.setdefault("description", "job")
    fields.setdefault("prompt", "do it")
    return SubagentRequest(subagent_type=kind, **fields)


def make_repo(path: Path) -> Path:
    path.mkdir()
    for args in (["init", "-q", "-b", "main"], ["add", "."],
                 ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "first"]):
        if args[0] == "add":
            (path / "README").write_text("hi\n")
        subprocess.run(["git", *args], cwd=path, check=True, capture_output=True)
    return path


def forkable(host: Host) -> None:
    """The parent has made a request and replied with a tool call: there is something to fork."""
    host.loop.messages = [{"role": "user", "content": [{"type": "text", "text": "go"}]},
                          {"role": "assistant", "content": [
                              {"type": "tool_use", "id": "toolu_a", "name": "Agent", "input": {}}]}]
    host.loop.last_request = ModelRequest("parent", host.loop.messages[:1], [])


