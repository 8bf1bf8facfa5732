"""The inputs of the subagent tools (subagents/tools.py), as pydantic models: imported at a
tool's first use, not when an agent starts (`Tool.input_ref`)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from swarm.runtime.tools.schema import BlankIsNone, SemanticBool, Text, ToolInput


class AgentInput(ToolInput):
    """The Agent tool takes strings and a boolean (`"yes"`/`"no"` too: a semantic boolean)."""

    description: Text = Field(description="3-5 words: what the subagent does")
    prompt: Text = Field(description="the task, with everything it needs to know")
    subagent_type: Text | None = None
    run_in_background: SemanticBool | None = None
    model: Text | None = Field(None, description="inherit (your own model), sonnet, opus,"
                               " haiku, a model id, or PROVIDER:MODEL (openai:..., ollama:...)")
    isolation: Annotated[Literal["worktree"] | None, BlankIsNone] = None


class AgentStatusInput(ToolInput):
    agent_id: str | None = None


class AgentStopInput(ToolInput):
    agent_id: str


class ParentMessageInput(ToolInput):
    to: str
    message: Text  # plain text only
    summary: str | None = None
