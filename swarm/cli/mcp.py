"""`swarm mcp list [--check]`: configured MCP servers; --check starts each and lists its tools.
`swarm mcp serve`: swarm itself as a stdio MCP server, so any MCP client can lead a team;
`swarm mcp hub` (hidden): the team's MCP server on this host for its agent CLI teammates;
`swarm mcp snippet CLIENT`: the configuration that makes a client start it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from swarm import settings
from swarm.cli.caller import current_agent_name
from swarm.cli.common import (
    emit,
    json_option,
    resolve_team_name,
    table,
    team_option,
)
from swarm.cli.helptext import examples
from swarm.cli.trust import say_if_ignored
from swarm.core.records.names import validate_agent_name, validate_team_name
from swarm.core.records.permissions import PERMISSION_MODES
from swarm.core.trust.mcp_config import load_mcp_config
from swarm.core.trust.process_memory import make_non_dumpable, scrub_starting_environ
from swarm.core.trust.secrets import is_secret
from swarm.errors import OperationFailedError
from swarm.ops.clients import client_names
from swarm.ops.clients import snippet as client_snippet
from swarm.ops.doctor.mcp_servers import check_servers, describe_servers


@click.group(epilog=examples("swarm mcp list", "swarm mcp list --check",
                             "swarm mcp snippet claude --team alpha"))
def mcp() -> None:
    """MCP servers (from .mcp.json and $SWARM_HOME/mcp.json)."""


@mcp.command("list", epilog=examples(
    "swarm mcp list", "swarm mcp list --check", "swarm mcp list --cwd ~/src/app --json"))
@click.option("--cwd", "cwd", default=None, type=click.Path(file_okay=False),
              help="Find the project's .mcp.json from this directory (default: the current one).")
@click.option("--check", is_flag=True, help="Start each server and list its tools.")
@json_option
def list_servers(cwd: str | None, check: bool, as_json: bool) -> None:
    """List configured MCP servers; a broken entry is a warning and the rest are listed."""
    workdir = Path(cwd or os.getcwd()).expanduser().resolve()
    config = load_mcp_config(workdir)
    for problem in config.problems:
        click.echo(f"swarm: warning: {problem} (skipped)", err=True)
    say_if_ignored(workdir)  # an untrusted project's servers are neither listed nor started
    servers: list[dict[str, Any]] = (check_servers(config, workdir, settings.mcp_timeout())
                                     if check else describe_servers(config))

    def human(_: Any) -> str:
        if not servers:
            where = ", ".join(config.files) or "no .mcp.json here, no $SWARM_HOME/mcp.json"
            return f"no MCP servers configured ({where})"
        headers = ["NAME", "TRANSPORT", "TARGET", "SOURCE"]
        rows = [[s["name"], s["transport"], s["target"], s["source"]] for s in servers]
        if check:
            headers.append("CHECK")
            for row, s in zip(rows, servers, strict=True):
                row.append(f"ok: {len(s['tools'])} tool(s)" if s["state"] == "running"
                           else f"FAILED: {s['error']}")
        lines = [table(rows, headers)]
        for s in servers if check else []:
            lines += [f"  {t['qualified']}: {t['description'].splitlines()[0] if t['description'] else ''}"
                      for t in s["tools"]]
        return "\n".join(lines)

    emit({"servers": servers, "problems": [str(p) for p in config.problems]}, as_json, human)
    failed = [s["name"] for s in servers if check and s["state"] != "running"]
    if failed:
        raise OperationFailedError(f"{len(failed)} of {len(servers)} MCP server(s) failed the "
                                   f"check: {', '.join(failed)}")


@mcp.command("serve", epilog=examples(
    "swarm mcp snippet codex --team alpha >> ~/.codex/config.toml",
    "swarm mcp serve --team alpha --permission-mode acceptEdits",
    "swarm mcp serve --team alpha --as reviewer"))
@team_option
@click.option("--as", "member", default=None, metavar="NAME",
              help="Play member NAME of the team (default: its lead).")
@click.option("--permission-mode", type=click.Choice(PERMISSION_MODES), default="default",
              show_default=True, help="The most the served lead may grant a teammate.")
def serve(team_name: str | None, member: str | None, permission_mode: str) -> None:
    """Serve a team over MCP on stdin/stdout, for Claude Code, Codex, Gemini CLI or any MCP
    client: it leads the team (TeamCreate, SpawnTeammate, SendMessage, ReadInbox, WaitForTeam,
    the Task tools, TeamStatus, AnswerPermission, AnswerPlan) or, with --as, is member NAME.

    `swarm mcp snippet claude|codex|gemini --team T` prints the configuration each client
    needs (approval, environment, a required server). A client's SIGINT or SIGTERM at the end
    of its session is a normal end.
    """
    speaker = current_agent_name()  # a teammate may serve only as itself (cli.authority)
    from swarm.mcp_server.host import ServeOptions
    from swarm.mcp_server.stdio import serve as run_server

    team = team_name if team_name is not None else (settings.team() or None)
    # Started below member NAME's own `swarm agent` (an agent CLI teammate's MCP server):
    # that process is the member; this one serves its tools.
    attached = member is not None and speaker == member.lower()
    if attached:  # its environment holds the store's URL: closed to the CLI's commands
        make_non_dumpable()
        scrub_starting_environ(is_secret)
    run_server(ServeOptions(team=team, member=member, permission_mode=permission_mode,
                            attached=attached))


@mcp.command("hub", hidden=True, epilog=examples("swarm mcp hub --team alpha"))
@click.option("--team", "team_name", required=True, help="The team it serves on this host.")
def hub(team_name: str) -> None:
    """The team's MCP server on this host, shared by its agent CLI teammates (their drivers
    start it and hand their CLIs a token each): streamable HTTP on 127.0.0.1. It ends by itself
    once the team is gone or no member driver is left."""
    from swarm.mcp_server.hub import serve_hub

    team = validate_team_name(team_name)
    # It serves members' calls with the store's URL: closed to their commands (the same user).
    make_non_dumpable()
    scrub_starting_environ(is_secret)
    serve_hub(team)


@mcp.command("snippet", epilog=examples(
    "swarm mcp snippet claude --team alpha", "swarm mcp snippet codex --team alpha",
    "swarm mcp snippet gemini --team alpha --as bob"))
@click.argument("client", type=click.Choice(client_names(), case_sensitive=False))
@team_option
@click.option("--as", "member", default=None, metavar="NAME",
              help="Play member NAME (register it first: `swarm team add NAME`).")
def snippet(client: str, team_name: str | None, member: str | None) -> None:
    """Print the configuration that makes CLIENT (Claude Code, Codex, Gemini CLI) start
    `swarm mcp serve` for a team: claude: shell commands; codex: a `~/.codex/config.toml`
    table; gemini: a `~/.gemini/settings.json` (or `.gemini/settings.json`) entry."""
    team = validate_team_name(resolve_team_name(team_name))
    who = validate_agent_name(member) if member is not None else None
    click.echo(client_snippet(client, team, who))
