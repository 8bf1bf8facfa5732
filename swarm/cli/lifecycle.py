"""`swarm shutdown | interrupt | kill | respawn | wait | mode`."""

from __future__ import annotations

import click

from swarm.cli.common import (
    SECONDS,
    emit,
    json_option,
    mode_cap,
    open_team,
    resolve_team_name,
    team_option,
    wide_option,
)
from swarm.cli.completion import complete_member, complete_model
from swarm.cli.helptext import examples
from swarm.cli.status import render
from swarm.core.records.permissions import PERMISSION_MODES
from swarm.core.team.team import Team
from swarm.errors import BadInputError, OperationFailedError
from swarm.ops.member.control import interrupt as do_interrupt
from swarm.ops.member.control import interrupted_line, set_mode, to_background
from swarm.ops.member.control import kill as do_kill
from swarm.ops.member.restart import respawn as do_respawn
from swarm.ops.member.shutdown import shutdown as do_shutdown
from swarm.ops.member.spawner import SpawnRequest
from swarm.ops.member.waiting import left_out
from swarm.ops.member.waiting import wait as do_wait


@click.command(epilog=examples(
    "swarm shutdown worker", "swarm shutdown --all --reason 'done for today'",
    "swarm shutdown --all --timeout 10 --force"))
@click.argument("name", required=False, shell_complete=complete_member)
@click.option("--all", "all_members", is_flag=True, help="Every teammate.")
@team_option
@click.option("--reason", "-r", default=None, help="Why (the teammate sees it).")
@click.option("--timeout", type=SECONDS, default=30.0, show_default=True,
              help="Seconds to wait for each teammate to exit.")
@click.option("--force", is_flag=True,
              help="Kill teammates that have not exited by the timeout (5 s for one that left "
                   "an earlier shutdown request unread; at once for one whose model cannot be "
                   "reached, which is otherwise ended after 5 s).")
@json_option
def shutdown(name: str | None, all_members: bool, team_name: str | None, reason: str | None,
             timeout: float, force: bool, as_json: bool) -> None:
    """Ask a teammate (or --all) to finish and exit."""
    if bool(name) == all_members:
        raise BadInputError("give a teammate NAME or --all")
    outcomes = do_shutdown(open_team(team_name), [name] if name else [], reason, timeout, force)
    emit([o.as_dict() for o in outcomes], as_json, lambda _: "\n".join(
        f"{o.name}: {o.result}" + (f" ({o.reason})" if o.reason else "")
        + (f"\n{o.worktree.describe()}" if o.worktree else "") for o in outcomes))
    bad = [o for o in outcomes if o.result in ("refused", "timeout")]
    if bad:
        raise OperationFailedError("; ".join(
            f"{o.name} {o.result}" + (f": {o.reason}" if o.reason else "") for o in bad)
            + ("" if force else " (use --force to kill after the timeout)"))


@click.command(epilog=examples("swarm interrupt worker", "swarm interrupt worker --team alpha",
                               "swarm interrupt worker --background"))
@click.argument("name", shell_complete=complete_member)
@click.option("--background", is_flag=True,
              help="Do not abort the turn: send the subagents it waits for to the background.")
@team_option
def interrupt(name: str, background: bool, team_name: str | None) -> None:
    """Abort a teammate's current turn.

    The teammate stays alive and goes idle (idle_reason: interrupted). With --background the
    turn goes on: its running foreground subagents move to the background (it stops waiting
    for them; each one's end arrives as a notification).
    """
    team = open_team(team_name)
    if background:
        moved = to_background(team, name)
        click.echo(f"sent to the background: {', '.join(moved)}")
        return
    click.echo(interrupted_line(do_interrupt(team, name)))


@click.command(epilog=examples("swarm kill worker"))
@click.argument("name", shell_complete=complete_member)
@team_option
def kill(name: str, team_name: str | None) -> None:
    """End a teammate's process now (its tasks go back to pending).

    It works on a team whose document is gone too: the teammate is found from its state.
    """
    click.echo(do_kill(Team.salvage(resolve_team_name(team_name)), name).describe())


@click.command(epilog=examples("swarm respawn worker", "swarm respawn worker --json"))
@click.argument("name", shell_complete=complete_member)
@team_option
@click.option("--model", "-m", default=None, shell_complete=complete_model,
              help="Run it on this model from now on (checked before anything restarts).")
@click.option("--permission-mode", type=click.Choice(PERMISSION_MODES), default=None,
              help="Restart it in this permission mode.")
@json_option
def respawn(name: str, team_name: str | None, model: str | None, permission_mode: str | None,
            as_json: bool) -> None:
    """Restart a dead or exited teammate.

    It keeps its identity and resumes its conversation from its transcript.
    """
    team = open_team(team_name)
    result = do_respawn(team, SpawnRequest(name, model=model, permission_mode=permission_mode,
                                           cap=mode_cap(team)))
    emit(result.as_dict(), as_json,
         lambda r: f"respawned {result.agent_id} (pane {result.pane_id or '-'}, pid {result.pid})")


@click.command(epilog=examples(
    "swarm wait --until idle", "swarm wait --until tasks-done --timeout 600",
    "swarm wait --until exited --json"))
@team_option
@click.option("--until", "until", type=click.Choice(["idle", "tasks-done", "exited", "asking"]),
              required=True, help="What to wait for (asking: a teammate waits for your answer"
              " to a permission request or a plan).")
@click.option("--timeout", type=SECONDS, default=None, help="Give up after S seconds (exit 124).")
@wide_option
@json_option
def wait(team_name: str | None, until: str, timeout: float | None, wide: bool,
         as_json: bool) -> None:
    """Wait for idle teammates, finished tasks, or exits.

    Exit 0 when it holds, 1 when a teammate died or failed, 124 on timeout.
    """
    statuses = do_wait(open_team(team_name), until, timeout)
    for note in left_out(statuses) if until != "exited" else []:
        click.echo(f"swarm: note: {note}", err=True)
    emit([s.as_dict() for s in statuses], as_json, lambda _: render(statuses, wide))


@click.command("mode", epilog=examples(
    "swarm mode worker acceptEdits", "swarm mode worker default --reason 'back to asking'"))
@click.argument("name", shell_complete=complete_member)
@click.argument("mode", type=click.Choice(PERMISSION_MODES), metavar="MODE")
@team_option
@click.option("--reason", "-r", default=None, help="Why (the teammate's pane shows it).")
@json_option
def mode(name: str, mode: str, team_name: str | None, reason: str | None, as_json: bool) -> None:
    """Change a teammate's permission mode, from its next tool call.

    MODE is default, acceptEdits, plan, auto or bypassPermissions. Setting auto again resumes
    a reviewer paused after its denials.
    """
    team = open_team(team_name)
    status = set_mode(team, name, mode, reason, cap=mode_cap(team))
    later = "" if status.state not in ("exited", "dead") else f" (it is {status.state}: from its next run)"
    emit({"name": status.name, "mode": mode, "state": status.state}, as_json,
         lambda _: f"{status.name}: mode {mode}{later}")
