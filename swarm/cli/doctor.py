"""`swarm doctor`."""

from __future__ import annotations

import click

from swarm.cli.common import emit, json_option
from swarm.ops.doctor import diagnose, render


@click.command()
@json_option
def doctor(as_json: bool) -> None:
    """Check what swarm can use here, and find stale teams.

    Reports tmux, iTerm2, the backend auto would pick and why, the API key, whether
    SWARM_HOME is writable, and teams with dead members.
    """

    report = diagnose()
    emit(report, as_json, render)
