"""`swarm status --watch`: the `swarm status` table, redrawn when the team's files change and
each second (its elapsed times go on), with what each member is doing now and for how long. It is
fitted to the terminal's width at each redraw like `status` (cli.common fit_table)."""

from __future__ import annotations

from typing import Any

from swarm.cli.common import fit_lines
from swarm.cli.status import render
from swarm.core.text.terminal import visible
from swarm.ops.member.control import team_watcher
from swarm.ops.member.health import observe

REDRAW = 1.0  # seconds: the elapsed times stay current between changes


def screen(team: Any, wide: bool = False) -> str:
    """One frame: the team, the table, the tasks done (team data made visible)."""
    statuses = observe(team, include_lead=True)
    tasks = team.tasks.list()
    done = sum(1 for t in tasks if t.status == "completed")
    table = render(statuses, wide, activity=True)
    footer = fit_lines(f"tasks {done}/{len(tasks)} done - Ctrl-C to leave", wide)
    return visible(f"{fit_lines(f'team {team.name}', wide)}\n{table}\n{footer}")


def watch_status(team: Any, wide: bool = False) -> None:
    from rich.live import Live
    from rich.text import Text

    # Text, not markup: a `[` in team data is a character; no wrapping (lines fit already).
    def frame() -> Any:
        return Text(screen(team, wide), no_wrap=True, overflow="crop")

    with Live(frame(), auto_refresh=False) as live:
        try:
            while True:
                with team_watcher(team) as watcher:
                    watcher.wait(REDRAW)  # wake on change; redraw anyway for the clocks
                live.update(frame(), refresh=True)
        except KeyboardInterrupt:
            return
