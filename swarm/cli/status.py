"""`swarm status`: who is doing what. `--watch`: the same table, redrawn when the team's files
change and each second (its elapsed times go on), with what each member is doing now and for
how long, fitted to the terminal's width at each redraw (cli.common fit_table)."""

from __future__ import annotations

import time
from typing import Any

import click

from swarm.cli.common import (
    emit,
    fit_lines,
    fit_table,
    json_option,
    open_team,
    team_option,
    wide_option,
)
from swarm.cli.helptext import examples
from swarm.core.records.state import activity_text, cost_text
from swarm.core.text.terminal import visible
from swarm.ops.member.health import observe

REDRAW = 1.0  # seconds (--watch): the elapsed times stay current between changes
# Left out first when `status` does not fit the terminal (--wide shows them).
OPTIONAL = ("BACKEND", "PANE", "PID", "ACTIVE", "TURNS", "TOKENS", "UNREAD", "MODE")


HEADERS = ["NAME", "STATE", "MODE", "BACKEND", "PANE", "PID", "TASK", "UNREAD", "TURNS",
           "TOKENS", "COST", "ACTIVE"]


def tokens_text(tokens: int, thinking: int) -> str:
    """Tokens, and of them the thinking ones when there were any: `1200 (300 thinking)`."""
    return f"{tokens} ({thinking} thinking)" if thinking else str(tokens)


def render(statuses: list[Any], wide: bool = False, activity: bool = False) -> str:
    """The table of `swarm status`; `activity` (the live view): what each member does now and
    for how long (a column of its own: cutting the activity to fit never cuts its time), after
    its state, instead of the ACTIVE clock time."""
    if not statuses:
        return "(no teammates: start one with `swarm spawn NAME`)"
    rows = []
    now = time.time()
    for s in statuses:
        state = s.state + (f" ({s.detail})" if s.detail and s.state in ("dead", "exited") else "")
        if s.state == "idle" and s.idle_reason not in (None, "available"):
            state += f" ({s.idle_reason})"
        row = [s.name, state, s.mode or "-", s.backend or "-", s.pane_id or "-",
               str(s.pid or "-"), f"#{s.current_task}" if s.current_task else "-",
               str(s.unread), str(s.turns), tokens_text(s.tokens, s.thinking_tokens),
               cost_text(s.cost_usd, s.cost_known),
               (s.last_activity or "-")[11:19]]
        if activity:
            row[2:2] = activity_text(s.state, s.activity, s.activity_since, s.last_activity,
                                     now)
            row.pop()
        rows.append(row)
    total_tokens = sum(s.tokens for s in statuses)
    thinking = sum(s.thinking_tokens for s in statuses)
    total_cost = sum(s.cost_usd for s in statuses)
    headers = [*HEADERS[:2], "ACTIVITY", "FOR", *HEADERS[2:-1]] if activity else HEADERS
    out = fit_table(rows, headers, wide, OPTIONAL, ("ACTIVITY", "STATE") if activity
                    else ("STATE",))
    subs = [[str(sub["agent_id"]), str(sub["subagent_type"]), str(sub["description"]),
             str(sub.get("summary") or "-"), str(sub["tool_uses"]), str(sub["tokens"])]
            for s in statuses for sub in s.subagents]
    if subs:  # NOW: a background one's summary of its progress
        out += "\n\nrunning subagents:\n" + fit_table(
            subs, ["ID", "TYPE", "DESCRIPTION", "NOW", "TOOL USES", "TOKENS"], wide,
            ("TOOL USES",), ("DESCRIPTION", "NOW"))
    known = all(s.cost_known for s in statuses)
    out += (f"\nteam total: {tokens_text(total_tokens, thinking)} tokens,"
            f" {cost_text(total_cost, known)}")
    shared: dict[str, list[str]] = {}
    for s in statuses:
        for path in s.overlaps:
            shared.setdefault(path, []).append(s.name)
    if shared:
        out += "\n\noverlapping writes (same file, shared checkout):"
        out += fit_lines("".join(f"\n  ! {path}: {', '.join(names)}"
                                 for path, names in sorted(shared.items())), wide)
    return out


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

    from swarm.ops.member.control import team_watcher  # only for the live view

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


@click.command(epilog=examples(
    "swarm status", "swarm status --team alpha --wide", "swarm status --watch",
    "swarm status --json"))
@team_option
@click.option("--watch", "-w", is_flag=True, help="A live view, refreshed on change.")
@wide_option
@json_option
def status(team_name: str | None, watch: bool, wide: bool, as_json: bool) -> None:
    """Show what each teammate is doing.

    State, permission mode, current task, unread count, turns, tokens and cost per teammate.
    """

    team = open_team(team_name)
    if watch:
        watch_status(team, wide)
        return
    statuses = observe(team, include_lead=True)
    emit([s.as_dict() for s in statuses], as_json, lambda _: render(statuses, wide))
