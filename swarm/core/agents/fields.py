"""The check of a user's or project's agent definition file: its fields as a pydantic model
(one problem per bad field, with the field's name), turned into an `AgentDefinition` record;
its `tools` (an unknown one dropped with a warning) and `disallowedTools` (strict) lists.

Its own module so pydantic is imported only when such a file exists: the built-in definitions
are plain data, and a spawn of one loads no validator (docs/design/tool-inputs.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from swarm.core.agents.agent_definition import (
    AgentDefinition,
    Source,
    check_agent,
    check_color,
    check_effort,
    check_isolation,
    check_mode,
    check_model,
    check_name,
)
from swarm.core.agents.memory import check_memory
from swarm.core.agents.skills import check_skills
from swarm.core.records.names import KNOWN_TOOLS, TEAM_TOOLS
from swarm.core.trust.config_files import ConfigProblem
from swarm.core.trust.mcp_config import McpServerSpec, definition_servers


def known_tools(value: Any, path: str, warnings: list[str]) -> Any:
    """`tools`: a tool swarm does not have is dropped with a warning (narrowing stays narrow).
    `disallowed_tools` stays strict: a misspelt denial must not silently allow the tool."""
    names = [p.strip() for p in value.split(",") if p.strip()] if isinstance(value, str) \
        else value
    if not isinstance(names, list):
        return value  # the validator says what is wrong
    kept = []
    for tool in names:
        if not isinstance(tool, str) or tool.startswith("mcp__") or tool in KNOWN_TOOLS:
            kept.append(tool)
            continue
        warnings.append(f"{path}: field 'tools': unknown tool {tool!r} ignored{_did_you_mean(tool)}")
    return kept


def _did_you_mean(tool: str) -> str:
    import difflib  # only for a misspelt tool

    close = difflib.get_close_matches(tool, KNOWN_TOOLS, n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def tool_list(value: Any) -> list[str] | None:
    """A YAML list or a comma-separated string of known tool names."""
    if value is None:
        return None
    if isinstance(value, str):
        value = [part.strip() for part in value.split(",") if part.strip()]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("must be a list of tool names or a comma-separated string")
    for tool in value:
        if tool.startswith("mcp__"):  # an MCP tool (mcp__server__tool) or a whole server
            continue
        if tool not in KNOWN_TOOLS:

            raise ValueError(f"unknown tool {tool!r}{_did_you_mean(tool)}; known:"
                             f" {', '.join(KNOWN_TOOLS)}")
    return list(dict.fromkeys(value))


def check_disallowed(value: Any) -> list[str]:
    tools = tool_list(value) or []
    kept = [t for t in tools if t in TEAM_TOOLS]
    if kept:  # refusing beats silently ignoring: effective_tools always keeps these
        raise ValueError(f"{', '.join(kept)} cannot be disallowed: every teammate keeps"
                         f" the team tools ({', '.join(TEAM_TOOLS)})")
    return tools


# The fields a plain type does not say enough about: each one's check (core/agents/agent_definition.py).
CHECKS: dict[str, Callable[[Any], Any]] = {
    "name": check_name, "tools": tool_list, "disallowed_tools": check_disallowed,
    "mcp_servers": definition_servers, "permission_mode": check_mode,
    "isolation": check_isolation, "model": check_model, "color": check_color,
    "agent": check_agent, "skills": check_skills,
    "memory": check_memory, "effort": check_effort,
}


class DefinitionFields(BaseModel):
    """What a definition file may set; `extra="forbid"`: keys were sorted out before."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    name: str
    description: str = ""
    tools: list[str] | None = None  # None: every tool
    disallowed_tools: list[str] = Field(default_factory=list)
    model: str | None = None
    max_turns: int | None = Field(default=None, ge=1, strict=True)
    max_budget_usd: float | None = Field(default=None, gt=0)
    max_tokens: int | None = Field(default=None, ge=1, strict=True)
    permission_mode: str | None = None
    color: str | None = None
    isolation: str | None = None
    omit_project_memory: StrictBool = False  # no SWARM.md/CLAUDE.md...
    omit_git_status: StrictBool = False  # no git branch and status in its environment part
    # MCP servers by name (configured in .mcp.json / $SWARM_HOME/mcp.json) or {name: spec}.
    mcp_servers: list[str | dict[str, McpServerSpec]] = Field(default_factory=list)
    background: StrictBool = False  # a subagent of this type: background
    hooks: dict[str, Any] | None = None  # settings-format hooks for this agent only
    agent: str | None = None  # `agent: claude-code`: a teammate of this type is that CLI
    skills: list[str] = Field(default_factory=list)  # preloaded into its prompt (core.agents.skills)
    memory: str | None = None  # user, project or local (core.agents.memory)
    effort: str | None = None  # low, medium, high or max

    @field_validator(*CHECKS, mode="before")
    @classmethod
    def _check(cls, value: Any, info: ValidationInfo) -> Any:
        return CHECKS[str(info.field_name)](value)

def checked(fields: dict[str, Any], prompt: str, source: Source, path: str,
            warnings: list[str]) -> AgentDefinition | list[ConfigProblem]:
    """The definition these front-matter fields make, or one problem per bad field."""
    try:
        valid = DefinitionFields(**fields)
    except ValidationError as exc:
        return [ConfigProblem(path=path, field=".".join(str(p) for p in err["loc"]) or None,
                              message=str(err["msg"]).removeprefix("Value error, "))
                for err in exc.errors()]
    values = {name: getattr(valid, name) for name in DefinitionFields.model_fields}
    return AgentDefinition(**values, prompt=prompt, source=source, path=path, warnings=warnings)
