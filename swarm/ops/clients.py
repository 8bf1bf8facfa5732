"""Outside agent clients (Claude Code, Codex, Gemini CLI) that lead a team or play one of its
members through `swarm mcp serve`: registering such a member ahead of its client
(`swarm team add NAME`), and the exact configuration each client needs (`swarm mcp snippet`,
the text docs/guide/mcp.md shows and the tests run the real CLIs with).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable

from swarm.core import kinds
from swarm.core.records.names import LEAD_NAME, validate_agent_name
from swarm.core.records.state import AgentState
from swarm.core.records.team_config import Member
from swarm.core.team.state import write_state
from swarm.core.team.team import Team
from swarm.errors import BadInputError

EXTERNAL = "external"  # the agent_type of a member an outside client plays: no model of swarm's
# What the served tools need from the shell that starts the client: Codex passes a server no
# environment but what `env_vars` names (then `$HOME/.swarm` is used whatever was exported).
ENV_VARS = ("SWARM_HOME", "SWARM_STORE")
TOOL_TIMEOUT_S = 120  # WaitForTeam waits up to its timeout_s (default 50 s)


def add_external(team: Team, name: str) -> Member:
    """Register member NAME for an outside client (`swarm mcp serve --team T --as NAME`):
    no model, no backend, no process of swarm's. Until its client connects it shows as exited
    (not connected), never as a teammate that failed to start."""
    clean = validate_agent_name(name)
    if clean == LEAD_NAME:
        raise BadInputError(f"{LEAD_NAME} is the lead: `swarm mcp serve --team {team.name}`"
                            " (without --as) plays it")
    member = team.add_member(clean, agent_type=EXTERNAL, model=None, backend=None)
    write_state(team.name, clean, AgentState(
        state="exited", terminated_reported=True,
        detail=f"not connected: an MCP client plays it with {serve_command(team.name, clean)}"))
    return member


def serve_args(team: str, member: str | None = None) -> list[str]:
    return ["mcp", "serve", "--team", team, *(["--as", member] if member else [])]


def serve_command(team: str, member: str | None = None) -> str:
    return f"`{shlex.join(['swarm', *serve_args(team, member)])}`"


def snippet(client: str, team: str, member: str | None = None, command: str = "swarm") -> str:
    """The configuration that makes `client` (a teammate kind with an MCP snippet, or its
    alias) start `swarm mcp serve` for team (as member)."""
    kind = kinds.find(client)
    if kind is None or kind.mcp_snippet is None:
        raise BadInputError(f"unknown client {client!r}: one of {', '.join(client_names())}")
    make: Callable[[str, list[str]], str] = kinds.load(kind.mcp_snippet)
    return make(command, serve_args(team, member))


def client_names() -> tuple[str, ...]:
    """What `swarm mcp snippet` takes: each kind with a snippet, by name and alias."""
    return tuple(n for k in kinds.all_kinds() if k.mcp_snippet for n in (k.name, *k.aliases))


def claude_code_snippet(command: str, args: list[str]) -> str:
    # MCP_CONNECTION_NONBLOCKING=0: the first model request waits for swarm's tools (Claude
    # Code otherwise connects servers in the background and may start without them), but only
    # a few seconds unless MCP_CONNECT_TIMEOUT_MS says longer: a server started on a busy
    # machine (12 s measured at load 12) would be left behind.
    return (f"claude mcp add swarm -- {shlex.join([command, *args])}\n"
            "export MCP_CONNECTION_NONBLOCKING=0 MCP_CONNECT_TIMEOUT_MS=60000\n"
            f"# the server reads {' and '.join(ENV_VARS)} from the environment claude runs in\n"
            '# headless: claude -p "..." --allowedTools mcp__swarm')


def codex_snippet(command: str, args: list[str]) -> str:
    return "\n".join([
        "[mcp_servers.swarm]",
        f"command = {json.dumps(command)}",
        f"args = {json.dumps(args)}",
        f"env_vars = {json.dumps(list(ENV_VARS))}  # Codex passes no other environment",
        'default_tools_approval_mode = "approve"  # `codex exec` refuses unapproved calls',
        "required = true  # fail at start, not run without swarm's tools",
        f"tool_timeout_sec = {TOOL_TIMEOUT_S}",
    ])


def gemini_snippet(command: str, args: list[str]) -> str:
    # trust: no confirmation per call; `env`: each variable the server reads, from the
    # environment gemini runs in (empty when unset: swarm's default then).
    server = {"command": command, "args": args, "trust": True,
              "env": {name: f"${{{name}:-}}" for name in ENV_VARS},
              "timeout": TOOL_TIMEOUT_S * 1000}
    return json.dumps({"mcpServers": {"swarm": server}}, indent=2)
