"""What every tool is: the `Tool` base (its name, input model, permission flags), the
`ToolContext` it runs with, its `ToolResult`, and `run_tool`, which turns every failure into an
error result the model can read. `ToolHost`: what a tool may ask of the agent it runs in
(`NoHost`: none). `SubagentRunner`: what the Agent tools ask of the subagent runner. The
tools themselves: builtin (Read, Write, Edit, Bash, Glob, Grep), team_tools, and the subagents'
Agent tools (runtime.subagents.tools).
"""

from __future__ import annotations

import functools
import importlib
import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from msgspec import Struct, field

from swarm.errors import SwarmError, ToolError

OUTPUT_CAP = 30_000  # characters of a tool's result the model is shown at most

if TYPE_CHECKING:
    from swarm.core.team.team import Team
    from swarm.runtime.tools.schema import ToolInput


class ToolHost(Protocol):
    """What a tool may ask of the agent it runs in."""

    def track_process(self, proc: subprocess.Popen[bytes] | None) -> None:
        """The Bash child now running (None: finished), so an interrupt can kill its tree."""

    def structured_sent(self, message: Any) -> None:
        """A structured message this agent sent (an approved shutdown ends it)."""

    def pending_shutdown_id(self) -> str | None:
        """The request id of the shutdown request the agent is answering, if any."""

    def exit_plan(self, plan: str) -> str:
        """ExitPlanMode: submit `plan` for approval and return what the model is told."""


class NoHost:
    """The one `ToolHost` with nothing to tell (tools run outside an agent: tests, scripts);
    an agent's host subclasses it and overrides what it has (the lead's, a subagent's, a
    teammate's: runtime.teammate.control)."""

    def track_process(self, proc: subprocess.Popen[bytes] | None) -> None:
        pass

    def structured_sent(self, message: Any) -> None:
        pass

    def pending_shutdown_id(self) -> str | None:
        return None

    def exit_plan(self, plan: str) -> str:
        return "plan mode is not active"


class SubagentRunner(Protocol):
    """What the Agent tools and SendMessage ask of the agent's subagent runner
    (`swarm.runtime.subagents.runner.Subagents`)."""

    def start(self, request: Any) -> ToolResult: ...

    def status(self, agent_id: str | None) -> ToolResult: ...

    def stop(self, agent_id: str, why: str) -> ToolResult: ...

    def owns(self, agent_id: str) -> bool: ...

    def message(self, agent_id: str, text: str, summary: str | None) -> ToolResult: ...


class ToolResult(Struct, dict=True):
    content: str
    is_error: bool = False


class ToolContext(Struct, dict=True):
    team: Team
    name: str
    cwd: Path
    env: dict[str, str] = field(default_factory=dict)
    host: ToolHost = field(default_factory=NoHost)  # the agent the tool runs in
    subagents: SubagentRunner | None = None  # the Agent tools' runner; None in a subagent
    # Where a running command's output goes as it comes (the pane): the loop sets it per call.
    output: Callable[[str], None] | None = None

    def resolve(self, raw: str) -> Path:
        path = Path(os.path.expanduser(raw))
        return path if path.is_absolute() else self.cwd / path


class Tool:
    name: str = ""
    description: str = ""
    # The input the tool takes, as "module:Class" of a ToolInput (its JSON schema is what the
    # model is shown), imported at the tool's first use: pydantic loads with the first call or
    # request, not at start-up (a shell teammate goes idle without it). None: an input passed
    # on as sent (an MCP server's, which checks it against its own schema). A tool may set
    # `input_model` itself instead (the lead's: its process needs pydantic anyway).
    input_ref: str | None = "swarm.runtime.tools.schema:NoInput"
    read_only: bool = False
    edits_files: bool = False

    @property
    def input_model(self) -> type[ToolInput] | None:
        return None if self.input_ref is None else input_class(self.input_ref)

    @property
    def input_schema(self) -> dict[str, Any]:
        if self.input_model is None:
            return {"type": "object"}
        from swarm.runtime.tools.schema import schema_of

        return schema_of(self.input_model)

    def spec(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description,
                "input_schema": self.input_schema}

    def parse(self, args: dict[str, Any], exact: bool = False) -> Any:
        """The input as the tool reads it: an `input_model` instance (or, without a model, the
        dict as sent). Bad input raises one ToolError naming every problem. `exact`: JSON's own
        types and no unknown field (an input a person edits)."""
        if self.input_model is None:
            return args
        from swarm.runtime.tools.schema import ValidationError, problems, validate

        try:
            return validate(self.input_model, args, exact)
        except ValidationError as exc:
            raise ToolError(f"Invalid input for {self.name}: {problems(exc)}") from None

    def run(self, args: Any, ctx: ToolContext) -> ToolResult:
        """Run with the input `parse` returned (each tool narrows `args` to its own model)."""
        raise NotImplementedError

    def describe(self, args: dict[str, Any]) -> str:
        """One line for a permission request, from the input as sent."""
        return f"{self.name}({_brief(args)})"


@functools.cache
def input_class(ref: str) -> type[ToolInput]:
    """The ToolInput class `module:Class` names (a test resolves every tool's)."""
    module, _, name = ref.partition(":")
    found: type[ToolInput] = getattr(importlib.import_module(module), name)
    return found


def run_tool(tool: Tool, args: dict[str, Any] | ToolInput, ctx: ToolContext) -> ToolResult:
    """Run a tool on an input as sent (validated here) or as `Tool.parse` returned it; any
    failure, bad input included, is an error result for the model, never a crash."""
    try:
        return tool.run(tool.parse(args) if isinstance(args, dict) else args, ctx)
    except ToolError as exc:
        return ToolResult(str(exc), is_error=True)
    except SwarmError as exc:
        return ToolResult(str(exc), is_error=True)
    # Broad, but not `Exception`: TurnInterrupted/AgentStopped (raised by signal handlers while a
    # tool runs) must get through. RuntimeError covers e.g. Glob's NotImplementedError for an
    # absolute pattern, which used to end the agent.
    except (OSError, ValueError, TypeError, LookupError, RuntimeError, ArithmeticError,
            AttributeError) as exc:
        return ToolResult(f"{type(exc).__name__}: {exc}", is_error=True)


def _brief(args: dict[str, Any]) -> str:
    first = next(iter(args.values()), "") if args else ""
    text = str(first).replace("\n", " ")
    return text if len(text) <= 120 else text[:117] + "..."
