"""`swarm top`: one live screen for the whole team (cli.top_app draws it, with Textual, imported
here only when it draws); `--once` prints the same grouped view as text (cli.top_text), `--json`
its data."""

from __future__ import annotations

import sys
import time

import click

from swarm.big_import import big_import
from swarm.cli.common import emit, json_option, open_team, team_option, terminal_width
from swarm.cli.helptext import examples
from swarm.cli.top_text import once_text
from swarm.errors import BadInputError
from swarm.ops.top import snapshot


@click.command(epilog=examples("swarm top", "swarm top --team alpha", "swarm top --once",
                               "swarm top --json"))
@team_option
@click.option("--once", is_flag=True, help="Print the grouped view as text and exit.")
@json_option
def top(team_name: str | None, once: bool, as_json: bool) -> None:
    """One live screen for the whole team, answering requests with one key.

    Members grouped Needs you / Working / Idle / Exited-Dead, the selected one's output, tasks,
    mail and diff; y approves, n denies, ? lists every key.
    """
    team = open_team(team_name)
    if once or as_json:
        view = snapshot(team)
        emit(view.as_dict(), as_json, lambda _: once_text(view, time.time(), terminal_width()))
        return
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise BadInputError("swarm top draws on a terminal: use `swarm top --once` or "
                            "`swarm top --json` for a pipe or a file")
    with big_import():  # Textual: only when it draws
        from swarm.cli.top_app import run_app
    run_app(team)
