"""`swarm doctor`."""

from __future__ import annotations

import click

from swarm.cli.common import emit, json_option


@click.command()
@json_option
def doctor(as_json: bool) -> None:
    """Check tmux, iTerm2, the backend choice, the API key, SWARM_HOME and stale teams."""
    from swarm.doctor import diagnose, render

    report = diagnose()
    emit(report, as_json, render)
