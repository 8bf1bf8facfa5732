"""The tools of subagents: `Agent`, `AgentStatus`, `AgentStop` (for the lead and teammates), the
SendMessage a subagent gets (to its parent only), and the tool sets subagents are given.

A subagent never gets `Agent`, `SpawnTeammate` or a team-management tool, nor any tool its
parent does not lend (`SubagentHost.lends`: no member grants more than it has). A fork is sent its
parent's tool definitions unchanged (so its requests hit the parent's prompt cache), but only the
ones in `SUBAGENT_USABLE` run: the others answer with an error saying why.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from msgspec import Struct

from swarm.core.agents.agent_definition import AgentDefinition
from swarm.core.agents.definitions import listed
from swarm.core.records.names import SUBAGENT_USABLE
from swarm.errors import ToolError
from swarm.runtime.tools.base import Tool, ToolContext, ToolResult

if TYPE_CHECKING:
    from swarm.runtime.subagents.tool_inputs import (
        AgentInput,
        AgentStatusInput,
        AgentStopInput,
        ParentMessageInput,
    )

NO_NESTING = ("a subagent cannot start subagents (a fork cannot fork): do the work yourself "
              "with your own tools")


class SubagentRequest(Struct, dict=True):
    description: str
    prompt: str
    subagent_type: str | None = None  # None: a fork
    background: bool | None = None  # None: as its definition says (`background`), else no
    model: str | None = None
    isolation: str | None = None

    @classmethod
    def parse(cls, args: AgentInput) -> SubagentRequest:
        prompt, description = args.prompt.strip(), args.description.strip()
        if not prompt:
            raise ToolError("prompt must not be empty: say what the subagent should do")
        if not description:
            raise ToolError("description is required (3-5 words saying what the subagent does)")
        return cls(description=description, prompt=prompt,
                   subagent_type=(args.subagent_type or "").strip() or None,
                   background=args.run_in_background, model=(args.model or "").strip() or None,
                   isolation=args.isolation)


class AgentTool(Tool):
    name = "Agent"
    description = (
        "Start a subagent: a helper with its own fresh context that does one focused job (a"
        " search, a review, a side task) and hands you back only its final report, so your own"
        " context stays small. `subagent_type` names an agent definition (built-in: `explore` and"
        " `plan`, read-only; `code-reviewer`, read-only plus Bash for tests and linters;"
        " `general-purpose`, with file and Bash tools). Without"
        " `subagent_type` it forks: a copy of you, with this whole conversation, does the"
        " directive in `prompt` and reports back, always in the background. A typed subagent's"
        " call waits for the report, unless `run_in_background` is true: then it returns the subagent's id at once and you get a"
        " <subagent-notification> when it ends (see AgentStatus, AgentStop). `isolation:"
        " \"worktree\"` gives it its own git worktree. SendMessage to a finished subagent's id"
        " continues its conversation in the background; `explore` and `plan` are one-shot: they"
        " run once and report, and are not continued."
    )
    input_ref = "swarm.runtime.subagents.tool_inputs:AgentInput"

    def run(self, args: AgentInput, ctx: ToolContext) -> ToolResult:
        if ctx.subagents is None:
            raise ToolError(NO_NESTING)
        return ctx.subagents.start(SubagentRequest.parse(args))

    def describe(self, args: dict[str, Any]) -> str:
        kind = args.get("subagent_type") or "fork"
        return f"Agent({kind}: {args.get('description')})"


class AgentStatusTool(Tool):
    name = "AgentStatus"
    description = ("Show your subagents (or one, by agent_id): status, type, description, tool"
                   " uses, tokens, and a finished one's report.")
    input_ref = "swarm.runtime.subagents.tool_inputs:AgentStatusInput"
    read_only = True

    def run(self, args: AgentStatusInput, ctx: ToolContext) -> ToolResult:
        if ctx.subagents is None:
            raise ToolError(NO_NESTING)
        return ctx.subagents.status(args.agent_id.strip() if args.agent_id else None)


class AgentStopTool(Tool):
    name = "AgentStop"
    description = "Stop a running subagent by its agent_id; you get its notification."
    input_ref = "swarm.runtime.subagents.tool_inputs:AgentStopInput"

    def run(self, args: AgentStopInput, ctx: ToolContext) -> ToolResult:
        if ctx.subagents is None:
            raise ToolError(NO_NESTING)
        return ctx.subagents.stop(args.agent_id.strip(), "stopped with AgentStop")


def subagent_tools() -> list[Tool]:
    return [AgentTool(), AgentStatusTool(), AgentStopTool()]


class ParentMessage(Tool):
    """SendMessage as a subagent has it: to its parent only, plain text."""

    name = "SendMessage"
    input_ref = "swarm.runtime.subagents.tool_inputs:ParentMessageInput"

    def __init__(self, parent: str, team: str, deliver: Callable[[str, str | None], None]) -> None:
        self.parent = parent
        self.team = team
        self.deliver = deliver
        self.description = (f"Send a plain-text message to `{parent}`, the agent that started you"
                            " (the only recipient you have), e.g. progress on a long job. Your"
                            " final reply reaches it anyway.")

    def run(self, args: ParentMessageInput, ctx: ToolContext) -> ToolResult:
        to = args.to.strip().lower()
        if to not in (self.parent, f"{self.parent}@{self.team}"):
            raise ToolError(f"as a subagent you can message only `{self.parent}`, who started you")
        if not args.message.strip():
            raise ToolError("message must be non-empty plain text")
        self.deliver(args.message, args.summary.strip() if args.summary else None)
        return ToolResult(f"sent to {self.parent}")

    def describe(self, args: dict[str, Any]) -> str:
        return f"SendMessage to {args.get('to')}"


class Refused(Tool):
    """A tool a fork is shown (its parent's definition, for the cache) but may not use."""

    input_model = None  # whatever the input: nothing runs

    def __init__(self, name: str, why: str) -> None:
        self.name = name
        self.why = why
        self.read_only = True  # nothing runs: no permission to ask for

    def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raise ToolError(self.why)


class Masked(Tool):
    """Shows the model exactly `spec` (the parent's definition) and runs `inner`."""

    def __init__(self, spec: dict[str, Any], inner: Tool) -> None:
        self._spec = spec
        self.inner = inner
        self.name = inner.name
        self.description = inner.description
        self.read_only = inner.read_only
        self.edits_files = inner.edits_files

    @property
    def input_schema(self) -> dict[str, Any]:
        return self.inner.input_schema

    def spec(self) -> dict[str, Any]:
        return self._spec

    def parse(self, args: dict[str, Any], exact: bool = False) -> Any:
        return self.inner.parse(args, exact)

    def run(self, args: Any, ctx: ToolContext) -> ToolResult:
        return self.inner.run(args, ctx)

    def describe(self, args: dict[str, Any]) -> str:
        return self.inner.describe(args)


def usable_tools(definition: AgentDefinition, every: dict[str, Tool],
                 message: ParentMessage, mcp: dict[str, Tool] | None = None) -> dict[str, Tool]:
    """A typed subagent's tools: its definition's allow-list and deny-list applied to
    `SUBAGENT_USABLE` and to the MCP tools it can reach (its parent's and its own servers'); no
    team tool is forced in, unlike for a teammate."""
    allowed = definition.tools
    denied = set(definition.disallowed_tools)
    out: dict[str, Tool] = {}
    for name in SUBAGENT_USABLE:
        if (allowed is not None and name not in allowed) or name in denied:
            continue
        out[name] = message if name == "SendMessage" else every[name]
    for name, tool in (mcp or {}).items():
        if (allowed is None or listed(name, allowed)) and not listed(name, denied):
            out[name] = tool
    return out


def lent_tools(given: dict[str, Tool], lends: Callable[[str], bool]
               ) -> tuple[dict[str, Tool], list[str]]:
    """Of a subagent type's tools, those its parent lends it, and the names withheld."""
    kept = {name: tool for name, tool in given.items() if lends(name)}
    return kept, [name for name in given if name not in kept]


def fork_tools(specs: list[dict[str, Any]], every: dict[str, Tool], message: ParentMessage,
               mcp: dict[str, Tool], lends: Callable[[str], bool]) -> dict[str, Tool]:
    """A fork's tools: the parent's definitions as sent, each running the subagent's version
    (its parent's MCP tools run as they are), and only those the parent still lends."""
    out: dict[str, Tool] = {}
    for spec in specs:
        name = str(spec.get("name"))
        if name == "Agent":
            inner: Tool = Refused(name, NO_NESTING)
        elif not lends(name):
            inner = Refused(name, f"{name} is not yours: the agent you were forked from does"
                            " not have it now")
        elif name == "SendMessage":
            inner = message
        elif name in mcp:
            inner = mcp[name]
        elif name in SUBAGENT_USABLE and name in every:
            inner = every[name]
        else:
            inner = Refused(name, f"{name} is not available to a subagent (forked workers have"
                            f" only {', '.join(SUBAGENT_USABLE)})")
        out[name] = Masked(spec, inner)
    return out
