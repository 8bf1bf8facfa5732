"""`swarm agent`: the teammate process itself (started by spawn, not by hand)."""

from __future__ import annotations

import sys

import click

from swarm.cli.helptext import examples
from swarm.runtime.teammate.entry import run_agent


@click.command(epilog=examples(
    "swarm agent --agent-id worker@alpha    # what spawn runs in the pane"))
@click.option("--agent-id", required=True, help="NAME@TEAM of a registered member.")
def agent(agent_id: str) -> None:
    """Run a teammate process (swarm spawn starts this for you)."""
    sys.exit(run_agent(agent_id))
