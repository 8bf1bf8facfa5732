"""An agent definition as swarm uses it (`AgentDefinition`, valid when built), the checks of a
definition file's fields (core.agents.fields runs them with pydantic), and what loading
definitions returns (`Definitions`, one `DefinitionProblem` per file that could not be used).
The loading itself: core.agents.definitions."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from swarm.core import kinds
from swarm.core.agents.builtin import ONE_SHOT_TYPES
from swarm.core.records.base import Record
from swarm.core.records.names import validate_color, validate_effort, validate_name
from swarm.core.records.permissions import PERMISSION_MODES
from swarm.core.trust.config_files import ConfigProblem
from swarm.errors import BadInputError, InvalidNameError

Source = Literal["builtin", "plugin", "user", "project", "policy"]


def _one_of(value: str, allowed: Sequence[str]) -> str:
    if value not in allowed:
        raise ValueError(f"must be one of {', '.join(allowed)} (got {value!r})")
    return value


# -- the checks of a definition file's fields (definition_fields.DefinitionFields runs them) ------
def check_name(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError("must be a string")
    try:
        return validate_name(value, "agent type")
    except InvalidNameError as exc:
        raise ValueError(str(exc)) from None


def check_mode(value: Any) -> str | None:
    return None if value is None else _one_of(str(value), PERMISSION_MODES)


def check_isolation(value: Any) -> str | None:
    return None if value is None else _one_of(str(value), ("worktree",))


def check_agent(value: Any) -> str | None:
    """`agent: NAME`: a teammate of this type is that agent CLI (spawn --agent), stored by its
    name in the registry of teammate kinds."""
    if value is None:
        return None
    found = kinds.find(str(value))
    if found is None or not found.is_cli:
        _one_of(str(value), kinds.agent_names())  # the error, listing what is allowed
    return found.name if found is not None else None


def check_model(value: Any) -> str | None:
    """`inherit` (the seeds' default) means: the parent's or the team's model, i.e. none of
    its own; it is never sent to the API as a model id."""
    if isinstance(value, str) and value.strip().lower() == "inherit":
        return None
    return _nonempty(value)


def check_effort(value: Any) -> str | None:
    try:
        return validate_effort(value, "effort")
    except BadInputError as exc:
        raise ValueError(str(exc).removeprefix("effort: ")) from None


def check_color(value: Any) -> str | None:
    clean = _nonempty(value)
    try:
        return None if clean is None else validate_color(clean)
    except BadInputError as exc:
        raise ValueError(str(exc)) from None


def _nonempty(value: Any) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError("must be a non-empty string")
    return value.strip()


class Shadowed(Record, kw_only=True):
    """A lower-priority definition of the same name that this one overrides."""

    source: Source
    path: str


class AgentDefinition(Record, kw_only=True):
    """A definition as swarm uses it, valid when built: the built-ins are plain data (a test
    checks them), and a file's fields pass `definition_fields.checked` first."""

    name: str
    description: str = ""
    tools: list[str] | None = None  # None: every tool
    disallowed_tools: list[str] = []
    model: str | None = None
    max_turns: int | None = None
    max_budget_usd: float | None = None  # its spend, its subagents' included (swarm.runtime.turn.budget)
    max_tokens: int | None = None
    permission_mode: str | None = None
    color: str | None = None
    isolation: str | None = None
    omit_project_memory: bool = False  # no SWARM.md/CLAUDE.md...
    omit_git_status: bool = False  # no git branch and status in its environment part
    # MCP servers by name (configured in .mcp.json / $SWARM_HOME/mcp.json) or
    # {name: mcp_config.McpServerSpec}.
    mcp_servers: list[Any] = []
    background: bool = False  # a subagent of this type: background
    hooks: dict[str, Any] | None = None  # settings-format hooks for this agent only
    agent: str | None = None  # an agent CLI (core.kinds) a teammate of it is
    skills: list[str] = []  # skill names preloaded into its prompt (core.agents.skills)
    memory: str | None = None  # its memory scope: user, project, local (core.agents.memory)
    effort: str | None = None  # low, medium, high, max (runtime.models.effort maps it)
    prompt: str = ""
    warnings: list[str] = []  # keys and tools that were ignored
    source: Source = "builtin"
    path: str = ""
    overrides: list[Shadowed] = []

    @property
    def claude_format(self) -> bool:
        """Claude Code's file (a `.claude/agents` directory's, a plugin's): its memory's
        project and local scopes live under `.claude/` (core.agents.memory)."""
        return self.source == "plugin" or Path(self.path).parent.parent.name == ".claude"

    @property
    def one_shot(self) -> bool:
        """A built-in that runs once and reports: an ended subagent of it is not resumed."""
        return self.source == "builtin" and self.name in ONE_SHOT_TYPES

    def defaults(self) -> dict[str, Any]:
        """Spawn defaults this definition gives (command-line flags override them)."""
        keys = ("model", "max_turns", "max_budget_usd", "max_tokens", "permission_mode", "color",
                "agent", "effort")
        return {k: getattr(self, k) for k in keys if getattr(self, k) is not None}


# A definition file's problem is a config file's problem: its path, the field, what is wrong.
DefinitionProblem = ConfigProblem


class Definitions(Record, kw_only=True):
    definitions: dict[str, AgentDefinition] = {}
    problems: list[DefinitionProblem] = []

    def names(self) -> list[str]:
        return sorted(self.definitions)
