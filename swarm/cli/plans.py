"""`swarm plans list | approve | reject`."""

from __future__ import annotations

from typing import Any

import click

from swarm.cli.common import emit, json_option, mode_cap, open_team, team_option
from swarm.cli.completion import complete_member
from swarm.cli.helptext import examples
from swarm.ops.approvals import answer_plan, pending_plans


@click.group(epilog=examples("swarm plans list", "swarm plans approve architect"))
def plans() -> None:
    """Review plans from plan-mode teammates."""


@plans.command("list", epilog=examples("swarm plans list", "swarm plans list --json"))
@team_option
@json_option
def list_plans(team_name: str | None, as_json: bool) -> None:
    """Plans waiting for approval."""
    pending = pending_plans(open_team(team_name))

    def human(_: Any) -> str:
        if not pending:
            return "(no plans waiting)"
        return "\n\n".join(f"== {p.message.sender} ({p.message.timestamp[11:19]}, "
                           f"id {p.request.request_id[:8]})\n{p.request.plan}" for p in pending)

    emit([p.as_dict() for p in pending], as_json, human)


@plans.command("approve", epilog=examples(
    "swarm plans approve architect", "swarm plans approve architect --mode acceptEdits"))
@click.argument("name", shell_complete=complete_member)
@click.option("--mode", "-m", default=None, metavar="MODE",
              help="Mode it works in now: acceptEdits or default (default: its working mode).")
@team_option
def approve(name: str, mode: str | None, team_name: str | None) -> None:
    """Approve NAME's plan: it leaves plan mode and starts working."""
    team = open_team(team_name)
    found = answer_plan(team, name, approve=True, mode=mode, cap=mode_cap(team))
    click.echo(f"approved the plan of {found.message.sender}"
               + (f" (it works in {mode} mode)" if mode else ""))


@plans.command("reject", epilog=examples(
    "swarm plans reject architect --feedback 'keep the public API as it is'"))
@click.argument("name", shell_complete=complete_member)
@click.option("--feedback", "-f", required=True, help="What to change (the teammate reads it).")
@team_option
def reject(name: str, feedback: str, team_name: str | None) -> None:
    """Send NAME back to planning with feedback."""
    found = answer_plan(open_team(team_name), name, approve=False, feedback=feedback)
    click.echo(f"rejected the plan of {found.message.sender}")
