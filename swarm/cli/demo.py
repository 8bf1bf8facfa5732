"""`swarm demo`."""

from __future__ import annotations

from pathlib import Path

import click

from swarm.cli.common import table
from swarm.cli.helptext import examples
from swarm.core.names import BACKENDS
from swarm.core.terminal import visible
from swarm.ops.demo import WORKERS, run_demo


@click.command(epilog=examples(
    "swarm demo", "swarm demo --backend hidden --timeout 60", "swarm demo --keep"))
@click.option("--keep", is_flag=True, help="Leave the team running (attach to watch it).")
@click.option("--backend", type=click.Choice(["auto", *BACKENDS]), default=None,
              help="Where the workers run (default: $SWARM_BACKEND or auto).")
@click.option("--timeout", type=float, default=120.0, show_default=True,
              help="Seconds the demo may take before it gives up.")
def demo(keep: bool, backend: str | None, timeout: float) -> None:
    """Run an offline team of three shell workers on this directory."""

    result = run_demo(Path.cwd(), keep=keep, backend=backend, say=click.echo, timeout=timeout)
    click.echo("")
    # The results are what commands printed about this directory (file names): made visible.
    click.echo(visible(table([[r["task"], r["owner"], r["seconds"] + "s", r["subject"],
                               r["result"]] for r in result.rows],
                             ["TASK", "WHO", "TOOK", "SUBJECT", "RESULT"])))
    click.echo(f"\n{len(result.rows)} tasks done by {len({r['owner'] for r in result.rows})} "
               f"teammates in {result.seconds:.1f}s (backend: {result.backend})")
    if result.kept:
        # Only tmux teammates have a session to attach to; hidden ones are watched by their logs.
        look = (f"`swarm attach --team {result.team}`" if result.backend == "tmux" else
                f"`swarm logs {WORKERS[0]} --follow --team {result.team}`")
        click.echo(f"team {result.team} is still running: {look},"
                   f" `swarm status --watch --team {result.team}`, then `swarm shutdown --all"
                   f" --team {result.team}` and `swarm team delete {result.team}`")
    else:
        click.echo(f"team {result.team} shut down and deleted")
