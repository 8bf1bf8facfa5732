"""Names and the fixed vocabularies every layer shares: team and agent names (rejected, never
silently rewritten), agent ids, pane backends, tool names and member colours."""

from __future__ import annotations

import re

from swarm.core.kinds import all_kinds
from swarm.errors import BadInputError, InvalidNameError

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,62}$")
LEAD_NAME = "team-lead"
RESERVED_AGENT_NAMES = frozenset({LEAD_NAME, "user", "system", "*"})

BACKENDS = ("tmux", "iterm2", "hidden", "ssh")  # ssh as `ssh:[USER@]HOST[:PORT]`
# Anthropic's model aliases: current ids, per the model literals of the installed SDK (newest
# of each family). Here, not with the Anthropic model, so a Tab offers them without it.
MODEL_ALIASES: dict[str, str] = {
    "sonnet": "claude-sonnet-5-5",
    "opus": "claude-opus-5-5",
    "haiku": "claude-haiku-5-5",
}
# The providers of `PROVIDER:MODEL` (runtime.models.providers.PROVIDERS describes each).
MODEL_PROVIDERS = ("anthropic", "bedrock", "vertex", "openai", "ollama")
OFFLINE_MODELS = ("shell", "scripted:")
# How hard a teammate thinks (a definition's `effort`, `--effort`, config.toml's `effort`):
# runtime.models.effort maps each to its provider's setting.
EFFORT_LEVELS = ("low", "medium", "high", "max")  # models that call no provider: `shell`, `scripted:PATH`
# Tools that only talk to the team: every teammate keeps them whatever its definition says, and
# they are allowed in every permission mode (a plan needs questions and answers).
TEAM_TOOLS = ("SendMessage", "TaskCreate", "TaskList", "TaskGet", "TaskUpdate")
# The lead's own team-management tools (`swarm lead`): allowed like the team tools.
LEAD_TOOLS = ("SpawnTeammate", "TeamStatus", "StopTeammate", "SetMode", "AnswerPermission",
              "AnswerPlan")
READ_ONLY_TOOLS = ("Read", "Glob", "Grep")
# Subagents: offered to the lead and teammates, never to a subagent (no nesting). Allowed in
# every permission mode: what a subagent does is checked call by call against the same policy.
SUBAGENT_TOOLS = ("Agent", "AgentStatus", "AgentStop")
# All a subagent may ever run: the file and shell tools, and SendMessage (to its parent only).
SUBAGENT_USABLE = ("Read", "Write", "Edit", "Bash", "Glob", "Grep", "SendMessage")
KNOWN_TOOLS = ("Read", "Write", "Edit", "Bash", "Glob", "Grep", *TEAM_TOOLS, "ExitPlanMode",
               *SUBAGENT_TOOLS)
# Claude Code's tools that swarm has no twin of: a Claude Code teammate asks about them by name
# (runtime.clis.permission), so a rule may name them.
MCP_RULES = "mcp__SERVER or mcp__SERVER__TOOL"  # how a rule names an MCP server's tools


def rule_tools() -> tuple[str, ...]:
    """What a permission rule may name: swarm's tools and every teammate kind's own."""
    return (*KNOWN_TOOLS, *LEAD_TOOLS, *(t for k in all_kinds() for t in k.own_tools))


def unknown_rule_tool(tool: str) -> str | None:
    """Why a rule's tool names no tool (`Bsh`), or None; an MCP name is any server's."""
    known = rule_tools()
    if tool.startswith("mcp__") or tool in known:
        return None
    import difflib  # only for a refusal

    close = difflib.get_close_matches(tool, known, n=1, cutoff=0.6)
    near = f" (did you mean {close[0]}?)" if close else ""
    return (f"unknown tool {tool!r}{near}; known tools: {', '.join(known)}, and MCP tools as"
            f" {MCP_RULES}")

# Member colours: the 16 terminal colours every view paints (the panes, tmux, `status --watch`,
# the report), or #rrggbb. A colour reaches tmux options, ANSI codes and the report's `style=`,
# so nothing else is ever stored. Claude Code's other agent colours read as the nearest one.
COLORS = ("black", "red", "green", "yellow", "blue", "magenta", "cyan", "white",
          *(f"bright_{c}" for c in ("black", "red", "green", "yellow", "blue", "magenta", "cyan",
                                    "white")))
COLOR_ALIASES = {"purple": "magenta", "pink": "bright_magenta", "orange": "yellow"}
_HEX_COLOR = re.compile(r"#[0-9a-f]{6}")


def is_color(value: object) -> bool:
    """A colour as stored: a palette name or #rrggbb (lower case)."""
    return isinstance(value, str) and (value in COLORS or bool(_HEX_COLOR.fullmatch(value)))


def validate_color(value: object) -> str:
    """The colour in its stored form, or BadInputError saying what is allowed."""
    lowered = value.strip().lower() if isinstance(value, str) else ""
    lowered = COLOR_ALIASES.get(lowered, lowered)
    if is_color(lowered):
        return lowered
    shown = str(value).encode("unicode_escape").decode("ascii")[:40]
    raise BadInputError(f"invalid colour {shown!r}: use #rrggbb or one of {', '.join(COLORS)}")


def validate_name(name: str, kind: str = "name") -> str:
    """Return the lower-cased name, or raise InvalidNameError saying what is allowed."""
    if not isinstance(name, str) or not name:
        raise InvalidNameError(f"{kind} must not be empty")
    lowered = name.lower()
    if not NAME_RE.fullmatch(lowered):
        shown = name.encode("unicode_escape").decode("ascii")
        if len(shown) > 70:
            shown = shown[:67] + "..."
        raise InvalidNameError(
            f"invalid {kind} {shown!r}: use 1-63 characters from a-z, 0-9, '-' and '_',"
            " starting with a letter or digit"
        )
    return lowered


def validate_team_name(name: str) -> str:
    return validate_name(name, "team name")


def validate_agent_name(name: str, *, allow_reserved: bool = False) -> str:
    lowered = validate_name(name, "agent name")
    if not allow_reserved and lowered in RESERVED_AGENT_NAMES:
        raise InvalidNameError(f"agent name {lowered!r} is reserved")
    return lowered


def agent_id(name: str, team: str) -> str:
    return f"{name}@{team}"


def parse_agent_id(value: str) -> tuple[str, str]:
    """Split `name@team` into validated (name, team)."""
    name, sep, team = value.partition("@")
    if not sep:
        raise InvalidNameError(f"invalid agent id {value!r}: expected NAME@TEAM")
    return validate_agent_name(name, allow_reserved=True), validate_team_name(team)

# The lead's key (swarm.core.team.lead_key): the file's name, the Redis key's last part.
KEY_FILE = "lead.key"
KEY_NAMES = (KEY_FILE, "lead_key")  # the file's name, the Redis key's last part


def validate_effort(value: object, where: str = "--effort") -> str | None:
    """An effort level (lower-cased), None for none, or one line naming the levels."""
    if value is None:
        return None
    text = str(value).strip().lower() if isinstance(value, str) else ""
    if text not in EFFORT_LEVELS:
        raise BadInputError(f"{where}: unknown effort {value!r}: use one of"
                            f" {', '.join(EFFORT_LEVELS)}")
    return text
