"""`swarm doctor`."""

from __future__ import annotations

import click

from swarm.cli.common import emit, json_option
from swarm.cli.helptext import examples
from swarm.errors import OperationFailedError
from swarm.ops.doctor.diagnose import diagnose, problems, render


@click.command(epilog=examples("swarm doctor", "swarm doctor --fix", "swarm doctor --json"))
@click.option("--fix", is_flag=True, help="Make the safe repairs, and say what was done.")
@json_option
def doctor(fix: bool, as_json: bool) -> None:
    """Check what swarm can use here, and find damage under SWARM_HOME.

    Reports tmux, iTerm2, the backend auto would pick and why, the API key, whether
    SWARM_HOME is writable, whether the project here is trusted (`swarm trust`), teams with
    dead members, and damage: quarantined .corrupt-*
    files, leftovers of crashed writers, loose or foreign ownership and modes, a full or
    read-only disk, members that died without it being recorded, a lead that is gone, and
    stale git worktree entries. Changes nothing without --fix. Exit 1 when it prints a
    problem (a `!!` line).
    """
    report = diagnose(fix=fix)
    found = problems(report)
    report["problems"] = found
    emit(report, as_json, render)
    if found:
        where = '"problems" above' if as_json else f"the !! line{'s' if len(found) > 1 else ''} above"
        raise OperationFailedError(
            f"doctor found {len(found)} problem{'s' if len(found) > 1 else ''} ({where})")
