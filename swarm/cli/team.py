"""`swarm team ...`: create, list, show, delete."""

from __future__ import annotations

from typing import Any

import click

from swarm.cli.common import (
    emit,
    json_option,
    refuse_teammate,
    resolve_team_name,
    table,
    to_jsonable,
)
from swarm.core.names import LEAD_NAME
from swarm.core.state import read_state
from swarm.core.store import warn
from swarm.core.team import Team
from swarm.errors import SwarmError
from swarm.ops.control import delete_team
from swarm.ops.health import mode_of


@click.group()
def team() -> None:
    """Create, list, show and delete teams."""


@team.command("create")
@click.argument("name")
@click.option("--description", "-d", default="", help="What the team is for.")
@json_option
def create(name: str, description: str, as_json: bool) -> None:
    """Create a team (a unique NAME-xxxx on a name clash).

    Prints only the team's name on stdout (what happened goes to stderr), so
    `export SWARM_TEAM=$(swarm team create alpha)` names the team really created.
    """
    created = Team.create(name, description=description)
    config = created.config()
    if as_json:
        emit(config, as_json, str)
        return
    note = f" ({name.lower()!r} was taken)" if created.name != name.lower() else ""
    click.echo(f"created team {created.name}{note}; lead: {config.lead_agent_id}", err=True)
    click.echo(created.name)


@team.command("list")
@json_option
def list_teams(as_json: bool) -> None:
    """List teams."""
    configs = []
    for found in Team.list():
        try:
            configs.append(found.config())
        except SwarmError as exc:  # a corrupt team file must not hide the other teams
            warn(str(exc))

    def human(_: Any) -> str:
        if not configs:
            return "no teams (create one with `swarm team create NAME`)"
        rows = [
            [c.name, str(len(c.members) - 1), c.created_at[:19], c.description] for c in configs
        ]
        return table(rows, ["TEAM", "TEAMMATES", "CREATED", "DESCRIPTION"])

    emit(configs, as_json, human)


@team.command("show")
@click.argument("name", required=False)
@json_option
def show(name: str | None, as_json: bool) -> None:
    """Show a team and its members."""
    config = Team.open(resolve_team_name(name)).config()
    # The mode each member is really in (a plan approval changes it), from its state file.
    modes = {m.name: mode_of(m, read_state(config.name, m.name)) for m in config.members
             if m.name != LEAD_NAME}

    def human(_: Any) -> str:
        head = f"team {config.name}: {config.description or '(no description)'}\n"
        head += f"lead: {config.lead_agent_id}   created: {config.created_at}\n"
        rows = [
            [m.name, m.agent_type, m.model or "-", m.backend or "-", m.pane_id or "-",
             str(m.pid or "-"), modes.get(m.name, m.permission_mode)]
            for m in config.members
        ]
        return head + table(rows, ["NAME", "TYPE", "MODEL", "BACKEND", "PANE", "PID", "MODE"])

    data = to_jsonable(config)
    for member in data["members"]:
        member["mode"] = modes.get(member["name"], member["permission_mode"])
    emit(data, as_json, human)


@team.command("delete")
@click.argument("name")
@click.option("--force", is_flag=True, help="Stop running members (and their panes) first.")
@click.option("--discard-worktrees", is_flag=True,
              help="Remove worktrees even with uncommitted work (default: keep and print them).")
@json_option
def delete(name: str, force: bool, discard_worktrees: bool, as_json: bool) -> None:
    """Delete a team and its files.

    Clean worktrees go with their branches; worktrees with work move to
    $SWARM_HOME/kept-worktrees/ and are printed (path and branch).
    """
    refuse_teammate("team delete")
    # Deleting also closes the panes of members that already exited: nothing is left behind.
    result = delete_team(name, force=force, discard_worktrees=discard_worktrees)

    def human(_: Any) -> str:
        stopped = f" (stopped {', '.join(result.stopped)})" if result.stopped else ""
        lines = [f"deleted team {result.team}{stopped}"]
        lines += [tree.describe() for tree in result.worktrees]
        return "\n".join(lines)

    emit(result.as_dict(), as_json, human)
