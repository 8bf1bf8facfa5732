"""`swarm demo` and `swarm demo --lead`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from swarm.cli.common import SECONDS, table
from swarm.cli.helptext import examples
from swarm.cli.replay import record_option, start_recording
from swarm.core.records import base as records
from swarm.core.records.names import BACKENDS
from swarm.core.records.task import Task
from swarm.core.text.terminal import visible
from swarm.errors import OperationFailedError, WaitTimeoutError
from swarm.ops.demo import (
    LEAD_PROMPT,
    LEAD_SCRIPT,
    TEAMMATE_SCRIPT,
    WORKERS,
    run_demo,
    summary_rows,
)

if TYPE_CHECKING:
    from swarm.lead.session import Report


@click.command(epilog=examples(
    "swarm demo", "swarm demo --lead", "swarm demo --backend hidden --timeout 60",
    "swarm demo --keep"))
@click.option("--lead", "with_lead", is_flag=True,
              help="A scripted lead plans, spawns teammates and reports (examples/lead.yaml).")
@click.option("--keep", is_flag=True, help="Leave the team running (attach to watch it).")
@click.option("--backend", type=click.Choice(["auto", *(b for b in BACKENDS if b != "ssh")]), default=None,
              help="Where the workers run (default: $SWARM_BACKEND or auto).")
@click.option("--timeout", type=SECONDS, default=120.0, show_default=True,
              help="Seconds the demo may take before it gives up.")
@record_option
def demo(with_lead: bool, keep: bool, backend: str | None, timeout: float,
         record: Path | None) -> None:
    """Run an offline team of three shell workers on this directory.

    With --lead, a scripted lead (no API key) does it the way `swarm lead` does: it plans
    tasks, spawns shell teammates and a scripted one, and the session ends with a report.
    """
    start_recording(record)
    if with_lead:
        lead_demo(keep, backend, timeout)
        return
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


def lead_demo(keep: bool, backend: str | None, timeout: float) -> None:
    """`swarm lead --headless` with the example scripts, its progress and report on stdout."""
    # Imported here: the lead's modules are not needed by any other command of this module.
    from swarm.lead.headless import ProgressUI, run_headless
    from swarm.lead.options import LeadOptions

    options = LeadOptions(
        prompt=LEAD_PROMPT, team="demo-lead", model=f"scripted:{LEAD_SCRIPT}",
        teammate_model=f"scripted:{TEAMMATE_SCRIPT}",
        backend=None if backend in (None, "auto") else backend, cwd=str(Path.cwd()),
        headless=True, timeout=timeout, keep=keep,
        # Its teammates run read-only counting commands (as `swarm demo`'s workers do in
        # bypassPermissions): a lead grants at most its own mode.
        permission_mode="bypassPermissions",
    )
    click.echo(f"you: {LEAD_PROMPT}")
    outcome = run_headless(options, LEAD_PROMPT, ui=ProgressUI(sys.stdout))
    if outcome.report is not None:
        click.echo("\n" + render_report(outcome.report))
    if outcome.code == 124:
        raise WaitTimeoutError(outcome.error or "timed out")
    if outcome.code:
        raise OperationFailedError(outcome.error or "the demo's lead session failed")


def render_report(report: Report) -> str:
    """The lead's last word, then what the team did: the report of the session."""
    tasks = [records.convert(t, Task) for t in report.tasks]
    rows = summary_rows(tasks)
    done = [r for r in rows if r["status"] == "completed"]
    teammates = [m["name"] for m in report.members if m["name"] != "team-lead"]
    wakes = ", ".join(f"{why} {n}" for why, n in sorted(report.wakes.items()))
    lines = [f"lead: {report.final_text}", "",
             table([[r["task"], r["owner"], r["status"], r["subject"], r["result"]] for r in rows],
                   ["TASK", "WHO", "STATUS", "SUBJECT", "RESULT"]), "",
             f"{len(done)} of {len(rows)} tasks done; teammates: {', '.join(teammates)};"
             f" the lead took {report.lead['turns']} turns (woken by: {wakes})"
             f" in {report.duration_s:.1f}s, cost ${report.cost_usd:.2f} (offline)"]
    return "\n".join(lines)
