"""`swarm team ...`: create, list, show, delete, add (an outside client's member), remove (a
member), resume."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from swarm.cli.common import (
    SECONDS,
    emit,
    fit_lines,
    fit_table,
    json_option,
    open_team,
    resolve_team_name,
    team_option,
    to_jsonable,
    wide_option,
)
from swarm.cli.completion import complete_member, complete_team
from swarm.cli.helptext import examples
from swarm.core.records.names import LEAD_NAME
from swarm.core.store.disk import warn
from swarm.core.team.state import read_state
from swarm.core.team.team import Team
from swarm.errors import OperationFailedError, SwarmError
from swarm.ops.clients import add_external
from swarm.ops.member.control import delete_team
from swarm.ops.member.health import mode_of
from swarm.ops.member.shutdown import remove_member

if TYPE_CHECKING:
    from swarm.ops.member.resume import ResumeResult


@click.group(epilog=examples("export SWARM_TEAM=$(swarm team create alpha)", "swarm team list",
                             "swarm team delete alpha"))
def team() -> None:
    """Create, list, show and delete teams; remove a member."""


@team.command("create", epilog=examples(
    "swarm team create alpha --description 'the parser rewrite'",
    "export SWARM_TEAM=$(swarm team create alpha)"))
@click.argument("name")
@click.option("--description", "-d", default="", help="What the team is for.")
@json_option
def create(name: str, description: str, as_json: bool) -> None:
    """Create a team (a unique NAME-xxxx on a name clash).

    Prints only the team's name on stdout (what happened goes to stderr), so
    `export SWARM_TEAM=$(swarm team create alpha)` names the team really created.
    """
    created = Team.create(name, description=description)
    if name != name.lower():  # names are lower case: say so rather than change it silently
        click.echo(f"swarm: note: team names are lower case: {name!r} is team {name.lower()}",
                   err=True)
    config = created.config()
    if as_json:
        emit(config, as_json, str)
        return
    note = f" ({name.lower()!r} was taken)" if created.name != name.lower() else ""
    click.echo(f"created team {created.name}{note}; lead: {config.lead_agent_id}", err=True)
    click.echo(created.name)


@team.command("list", epilog=examples("swarm team list", "swarm team list --json"))
@wide_option
@json_option
def list_teams(wide: bool, as_json: bool) -> None:
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
        return fit_table(rows, ["TEAM", "TEAMMATES", "CREATED", "DESCRIPTION"], wide,
                         ("CREATED",), ("DESCRIPTION",))

    emit(configs, as_json, human)


@team.command("show", epilog=examples("swarm team show", "swarm team show alpha --wide"))
@click.argument("name", required=False, shell_complete=complete_team)
@wide_option
@json_option
def show(name: str | None, wide: bool, as_json: bool) -> None:
    """Show a team and its members."""
    config = Team.open(resolve_team_name(name)).config()
    # The mode each member is really in (a plan approval changes it), from its state file.
    modes = {m.name: mode_of(m, read_state(config.name, m.name)) for m in config.members
             if m.name != LEAD_NAME}

    def human(_: Any) -> str:
        head = fit_lines(f"team {config.name}: {config.description or '(no description)'}\n"
                         f"lead: {config.lead_agent_id}   created: {config.created_at}", wide)
        rows = [
            [m.name, m.agent_type, m.model or "-", m.backend or "-", m.pane_id or "-",
             str(m.pid or "-"), modes.get(m.name, m.permission_mode)]
            for m in config.members
        ]
        return head + "\n" + fit_table(rows, ["NAME", "TYPE", "MODEL", "BACKEND", "PANE", "PID", "MODE"],
                                wide, ("PANE", "PID", "BACKEND", "TYPE"))

    data = to_jsonable(config)
    for member in data["members"]:
        member["mode"] = modes.get(member["name"], member["permission_mode"])
    emit(data, as_json, human)


@team.command("delete", epilog=examples(
    "swarm team delete alpha", "swarm team delete alpha --force --discard-worktrees"))
@click.argument("name", shell_complete=complete_team)
@click.option("--force", is_flag=True, help="Stop running members (and their panes) first.")
@click.option("--discard-worktrees", is_flag=True,
              help="Remove worktrees even with uncommitted work (default: keep and print them).")
@json_option
def delete(name: str, force: bool, discard_worktrees: bool, as_json: bool) -> None:
    """Delete a team and its files.

    Clean worktrees go with their branches; worktrees with work move to
    $SWARM_HOME/kept-worktrees/ and are printed (path and branch).
    """
    # Deleting also closes the panes of members that already exited: nothing is left behind.
    result = delete_team(name, force=force, discard_worktrees=discard_worktrees)

    def human(_: Any) -> str:
        stopped = f" (stopped {', '.join(result.stopped)})" if result.stopped else ""
        lines = [f"deleted team {result.team}{stopped}"]
        lines += [tree.describe() for tree in result.worktrees]
        return "\n".join(lines)

    emit(result.as_dict(), as_json, human)


@team.command("remove", epilog=examples(
    "swarm team remove worker", "swarm team remove worker --force"))
@click.argument("name", shell_complete=complete_member)
@team_option
@click.option("--force", is_flag=True, help="Kill it instead of asking it to shut down.")
@click.option("--timeout", type=SECONDS, default=30.0, show_default=True,
              help="Seconds to wait for it to exit after the shutdown request.")
@json_option
def remove(name: str, team_name: str | None, force: bool, timeout: float, as_json: bool) -> None:
    """Stop a teammate, give back its tasks, and free its name.

    Its transcript and messages stay for `swarm report` (as NAME.removed-N).
    """
    result = remove_member(open_team(team_name), name, force=force, timeout=timeout)

    def human(_: Any) -> str:
        tasks = f"; gave back task(s) {', '.join('#' + i for i in result.released)}" if (
            result.released) else ""
        lines = [f"removed {result.name} ({result.stopped}){tasks}"]
        lines += [result.worktree.describe()] if result.worktree else []
        return "\n".join(lines)

    emit(result.as_dict(), as_json, human)


@team.command("resume", epilog=examples(
    "swarm team resume alpha --dry-run", "swarm team resume alpha",
    "swarm team resume alpha --shell-lead --json"))
@click.argument("name", required=False, shell_complete=complete_team)
@click.option("--dry-run", is_flag=True, help="Say who would start and why; start nothing.")
@click.option("--shell-lead", is_flag=True,
              help="A dead `swarm lead` is not coming back: lead the team from this shell.")
@json_option
def resume(name: str | None, dry_run: bool, shell_lead: bool, as_json: bool) -> None:
    """Bring a team back after all its processes died (a reboot, kill -9).

    Every teammate that was not shut down is respawned with its conversation and continues
    the tasks it was working on; its unread mail waits for it; a worktree member works in its
    worktree. Members shut down before stay down. Running it again starts nothing.
    A dead `swarm lead` is not started: the command that continues it is printed.
    """
    from swarm.ops.member.resume import resume_team  # the spawner: only when something may start

    result = resume_team(Team.open(resolve_team_name(name)), dry_run=dry_run,
                         shell_lead=shell_lead)
    emit(result.as_dict(), as_json, lambda _: resume_text(result))
    if result.failed:
        raise OperationFailedError("; ".join(f"{m.name} did not start: {m.why}"
                                             for m in result.failed))


def resume_text(result: ResumeResult) -> str:
    lines = []
    for m in result.members:
        what = m.action if m.action != "start" else "would start"
        pid = f" (pid {m.pid})" if m.pid else ""
        why = f": was {m.why}" if m.why and m.action != "failed" else (
            f": {m.why}" if m.why else "")
        tasks = f"; continues task(s) {', '.join('#' + i for i in m.kept)}" if m.kept else ""
        tree = f"; worktree {m.worktree}" if m.worktree and m.action in ("start", "started") else ""
        lines.append(f"{m.name}: {what}{pid}{why}{tasks}{tree}")
    seat = result.lead
    if seat.state == "gone":
        lines.append(f"lead: its process is gone; continue it with `{seat.command}`"
                     " (or resume with --shell-lead)")
    else:
        lines.append("lead: " + ("a `swarm lead` process leads" if seat.state == "running"
                                 else "led from a shell (nothing to start)"))
    lines += result.notes
    count = len(result.started)
    if count:
        verb = "would start" if result.dry_run else "started"
        lines.append(f"{verb} {count} teammate(s) of team {result.team}")
    else:
        lines.append(f"started nothing: every teammate of {result.team} not shut down is running")
    return "\n".join(lines)


@team.command("add", epilog=examples(
    "swarm team add bob --team alpha", "swarm mcp serve --team alpha --as bob"))
@click.argument("name")
@team_option
@json_option
def add(name: str, team_name: str | None, as_json: bool) -> None:
    """Register member NAME for an outside MCP client (Claude Code, Codex, Gemini CLI) that
    plays it with `swarm mcp serve --team T --as NAME`.

    It gets no model and no process of swarm's: the client is its agent. Until the client
    connects it shows as exited (not connected); the lead can message it and assign it tasks.
    """
    target = open_team(team_name)
    member = add_external(target, name)

    def human(_: Any) -> str:
        return (f"added {member.name} to team {target.name} (an MCP client plays it:"
                f" swarm mcp serve --team {target.name} --as {member.name})")

    emit(member, as_json, human)
