"""`swarm agent`: the teammate process itself (started by spawn, not by hand)."""

from __future__ import annotations

import gc
import sys

import click


@click.command()
@click.option("--agent-id", required=True, help="NAME@TEAM of a registered member.")
def agent(agent_id: str) -> None:
    """Run a teammate process (swarm spawn starts this for you)."""
    # The runtime's imports build many objects and no garbage: cycle collection during them is
    # wasted start-up time (~5%). Freezing them afterwards also keeps later collections short.
    collecting = gc.isenabled()
    gc.disable()
    try:
        from swarm.runtime.agent import run_agent
    finally:
        if collecting:
            gc.freeze()
            gc.enable()
    sys.exit(run_agent(agent_id))
