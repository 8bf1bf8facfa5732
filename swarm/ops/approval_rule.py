"""What approving a permission request may do.

The request is the requester's own words (anyone who can write the lead's mailbox can forge one),
so nothing in it becomes a rule as it is:
- its tool must be one the requester has: a built-in tool of its definition (or one a typed
  subagent of it may use, when it has the Agent tool), or an MCP tool of a server it reaches;
- the rule `--always` adds is built from the call's real input (or the person's edited input),
  names exactly that call (`Bash(<the command>)`, `Write(<the absolute path>)` with wildcards
  escaped), and is never a bare tool or `Tool(*)`: a call no exact rule can name (a blank
  command, an MCP tool) gets none, unless the person types the rule (`--rule`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from swarm.core.definitions import effective_tools, get_definition, load_definitions
from swarm.core.names import LEAD_NAME, SUBAGENT_USABLE, TEAM_TOOLS
from swarm.core.protected import absolute
from swarm.core.rules import RULE_RE, covers, validate_rule
from swarm.core.team import Member, Team
from swarm.core.workspace_trust import decide
from swarm.errors import BadInputError, SwarmError
from swarm.runtime.tools.registry import all_tools

# An MCP tool as swarm names it: mcp__<server>__<tool>, letters, digits, `_` and `-` only
# (runtime/extensions/mcp_client.qualified_name), at most 64 characters.
MCP_TOOL = re.compile(r"mcp__[A-Za-z0-9_-]+__[A-Za-z0-9_-]+\Z")
_GLOB = re.compile(r"([*?\[])")  # fnmatch's specials: each escaped as a one-character class


def requester(team: Team, sender: str, agent_id: str) -> Member:
    """The member a request comes from: it names itself, in this team."""
    member = team.config().member(sender)
    if member is None or member.name == LEAD_NAME or agent_id != member.agent_id:
        raise BadInputError(f"{agent_id!r} is not a teammate of team {team.name!r}")
    return member


def check_tool(member: Member, tool_name: str) -> None:
    """Refuse a request for a tool the requester does not have (then nothing it asks for
    could run: the request is not one swarm made)."""
    why = _lacks(member, tool_name)
    if why:
        raise BadInputError(f"{member.name} has no tool {tool_name!r} ({why}): the request was"
                            " not made by swarm; deny it (`swarm permissions deny`)")


def _lacks(member: Member, tool_name: str) -> str | None:
    builtin = all_tools()
    mcp = len(tool_name) <= 64 and MCP_TOOL.match(tool_name) is not None
    if tool_name not in builtin and not mcp:
        return "no tool has that name"
    if member.host:  # its definitions are on another host: the name's shape is all we know
        return None
    cwd = Path(member.cwd or os.getcwd())
    from swarm.runtime.extensions.loader import checkout_of  # the agent's own decision

    project = decide(cwd, checkout_of(member), granted=member.trusted_config).project
    try:
        definition = get_definition(member.agent_type, cwd, project=project)
    except SwarmError as exc:
        return f"its agent type cannot be read: {exc}"
    if _listed(tool_name, definition.disallowed_tools):  # binding, through a subagent too
        return f"its agent type {definition.name} disallows it"
    names = effective_tools(definition, list(builtin), TEAM_TOOLS)
    delegates = "Agent" in names  # a typed subagent may have tools its parent lacks
    if not mcp:
        if tool_name in names or (delegates and tool_name in SUBAGENT_USABLE):
            return None
        return f"its agent type {definition.name} does not give it"
    servers = [*member.mcp_servers, *_server_names(definition.mcp_servers)]
    if delegates:
        for other in load_definitions(cwd, project=project).definitions.values():
            servers += _server_names(other.mcp_servers)
    if any(tool_name.startswith(f"mcp__{server}__") for server in servers):
        return None
    return "it has no MCP server of that name"


def _server_names(entries: list[Any]) -> list[str]:
    return [n for e in entries for n in ([e] if isinstance(e, str) else list(e))]


def _listed(tool_name: str, names: list[str]) -> bool:
    return tool_name in names or "__".join(tool_name.split("__")[:2]) in names


def exact_rule(tool_name: str, args: dict[str, Any], cwd: Path) -> str:
    """The rule naming exactly this call, or BadInputError when none can."""
    if tool_name == "Bash":
        command = args.get("command")
        spec = command.strip() if isinstance(command, str) else ""
        if not spec:
            raise _no_rule(tool_name, "the command is blank")
        if spec.endswith(":*") or spec == "*":  # a rule would read it as a prefix or as all
            raise _no_rule(tool_name, f"a rule would read {spec!r} as a pattern")
    elif tool_name in ("Write", "Edit"):
        raw = args.get("file_path")
        if not isinstance(raw, str) or not raw.strip():
            raise _no_rule(tool_name, "it names no file")
        # The requester's file, absolute (a team rule holds in every member's cwd), with the
        # wildcard characters of its name escaped: `**` is a file called `**`.
        spec = _GLOB.sub(r"[\1]", os.path.normpath(absolute(raw, cwd)))
    else:
        raise _no_rule(tool_name, "the only rule for it is the whole tool")
    rule = f"{tool_name}({spec})"
    match = RULE_RE.match(rule)
    if match is None or match.groups() != (tool_name, spec):  # it must read back as written
        raise _no_rule(tool_name, "it cannot be written as a rule")
    return rule


def _no_rule(tool_name: str, why: str) -> BadInputError:
    return BadInputError(f"no rule names exactly this {tool_name} call ({why}), so `always` adds"
                         " none: approve it once, or type the rule you mean (`swarm permissions"
                         " approve ID --rule RULE`)")


def typed_rule(rule: str, tool_name: str) -> str:
    """A rule the person typed (`--rule`): any valid rule that covers the requested tool."""
    checked = validate_rule(rule)
    match = RULE_RE.match(checked)
    if match is None or not covers(match.group(1), tool_name):
        raise BadInputError(f"--rule {rule!r} does not cover {tool_name}: name that tool")
    return checked
