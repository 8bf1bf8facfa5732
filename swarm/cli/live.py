"""`swarm status --watch`: a live table that redraws when the team's files change."""

from __future__ import annotations

from typing import Any

from swarm.core.names import is_color
from swarm.core.state import cost_text
from swarm.core.terminal import visible
from swarm.ops.control import team_watcher
from swarm.ops.health import observe


def _table(team: Any, statuses: list[Any]) -> Any:
    from rich.table import Table
    from rich.text import Text

    def cell(value: object, style: str | None = None) -> Any:
        # Text, not markup: a `[` in team data is a character, and its controls are escapes.
        return Text(visible(str(value)), style=style or "")

    table = Table(title=f"team {team.name}", expand=False)  # team names are plain a-z0-9-_
    for header in ("NAME", "STATE", "MODE", "TASK", "UNREAD", "TURNS", "TOKENS", "COST", "ACTIVE"):
        table.add_column(header)
    for s in statuses:
        style = s.color if s.color and s.color != "white" and is_color(s.color) else None
        state = s.state + (f" ({s.detail})" if s.detail and s.state in ("dead", "exited") else "")
        table.add_row(cell(s.name, style), cell(state), cell(s.mode or "-"),
                      cell(f"#{s.current_task}" if s.current_task else "-"), str(s.unread),
                      str(s.turns), str(s.tokens), cost_text(s.cost_usd, s.cost_known),
                      cell((s.last_activity or "-")[11:19]))
        for sub in s.subagents:  # its running subagents, one row each
            table.add_row(cell(f"  {sub['agent_id']}"),
                          cell(f"{sub['subagent_type']}: {sub['description']}"),
                          "-", "-", f"{sub['tool_uses']} tools", str(sub["tokens"]), "-", "-")
    tasks = team.tasks.list()
    done = sum(1 for t in tasks if t.status == "completed")
    shared = {path for s in statuses for path in s.overlaps}
    overlaps = f" - {len(shared)} file(s) written by several teammates" if shared else ""
    table.caption = f"tasks {done}/{len(tasks)} done{overlaps} - Ctrl-C to leave"
    return table


def watch_status(team: Any) -> None:
    from rich.live import Live


    with Live(_table(team, observe(team, include_lead=True)), auto_refresh=False) as live:
        try:
            while True:
                with team_watcher(team) as watcher:
                    watcher.wait(2.0)  # wake on change; redraw anyway for heartbeats
                live.update(_table(team, observe(team, include_lead=True)), refresh=True)
        except KeyboardInterrupt:
            return
