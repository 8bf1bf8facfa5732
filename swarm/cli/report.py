"""`swarm report`: a run's timeline, messages, turns, tokens and cost, read from the team's files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from swarm.cli.common import (
    emit,
    fit_table,
    json_option,
    resolve_team_name,
    team_option,
    wide_option,
)
from swarm.cli.helptext import examples
from swarm.core.store.disk import write_bytes_atomic
from swarm.errors import BadInputError
from swarm.ops.report.build import build_report
from swarm.ops.report.html import render_html, report_rows

# Left out first when the member table does not fit the terminal (--wide shows them).
OPTIONAL = ("MESSAGES SENT", "TOOL CALLS", "BUSY", "TURNS", "WALL TIME")


@click.command(epilog=examples(
    "swarm report", "swarm report --html run.html", "swarm report --team alpha --json"))
@team_option
@click.option("--html", "html_path", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="Write the report as a self-contained HTML page to this file.")
@wide_option
@json_option
def report(team_name: str | None, html_path: Path | None, wide: bool, as_json: bool) -> None:
    """What a team did: per member turns, tokens, cost and time.

    With --html, a page with a timeline per member, the tasks and the messages.

    Works during a run and after it, as long as the team's files are there (a team deleted
    with `swarm team delete` is gone; keep it with --keep to report on it).
    """
    data = build_report(resolve_team_name(team_name))
    if html_path is not None:
        try:
            write_bytes_atomic(html_path, render_html(data).encode())
        except OSError as exc:
            raise BadInputError(f"cannot write the report to {html_path}: "
                                f"{exc.strerror or exc}") from None

    def human(_: Any) -> str:
        headers, rows = report_rows(data)
        lines = [fit_table(rows, headers, wide, OPTIONAL)]
        if data.empty:
            lines.insert(0, f"no activity recorded for team {data.team} yet")
        lines += [f"note: {note}" for note in data.notes]
        lines.append(f"wrote {html_path}" if html_path is not None
                     else "(--html FILE: the timeline, tasks and messages as a page)")
        return "\n".join(lines)

    emit(data.as_dict(), as_json, human)
