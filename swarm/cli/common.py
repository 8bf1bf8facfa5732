"""Shared CLI pieces: the --team/--json options and rendering data as text or JSON."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TypeVar

import click

from swarm import settings
from swarm.cli.caller import acting_member
from swarm.cli.completion import complete_team
from swarm.core.records import base as records
from swarm.core.records.permissions import ModeCap
from swarm.core.team.team import Team
from swarm.core.text.terminal import visible
from swarm.errors import BadInputError

F = TypeVar("F", bound=Callable[..., Any])


# A wait in seconds (--timeout): a negative or zero one is refused naming the option.
SECONDS = click.FloatRange(min=0, min_open=True)


def team_option(func: F) -> F:
    return click.option(
        "--team", "-t", "team_name", default=None, help="Team name (default: $SWARM_TEAM).",
        shell_complete=complete_team,
    )(func)


def json_option(func: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print JSON.")(func)


def resolve_team_name(team_name: str | None) -> str:
    # An explicit but empty --team is an invalid name (Team.open says so), not "use SWARM_TEAM".
    name = team_name if team_name is not None else settings.team()
    if name is None or (team_name is None and not name):
        raise BadInputError("no team given: pass --team NAME or set SWARM_TEAM")
    return name


def open_team(team_name: str | None) -> Any:

    return Team.open(resolve_team_name(team_name))


def mode_cap(team: Team) -> ModeCap | None:
    """The most this shell may grant: its member's own mode now (None: a person, not limited)."""
    from swarm.core.team.state import read_state
    from swarm.ops.member.health import mode_of

    name = acting_member()
    if name is None:
        return None
    member = team.config().member(name)
    return ModeCap(name, mode_of(member, read_state(team.name, name)) if member else "default")


def to_jsonable(data: Any) -> Any:
    if isinstance(data, records.Record) or hasattr(data, "model_dump"):
        return records.to_dict(data)  # a pydantic model (an MCP spec) writes its own JSON
    if isinstance(data, list | tuple):
        return [to_jsonable(item) for item in data]
    if isinstance(data, dict):
        return {key: to_jsonable(value) for key, value in data.items()}
    return data


def emit(data: Any, as_json: bool, human: Callable[[Any], str], styled: bool = False) -> None:
    """`data` as JSON, or as the text `human` makes of it: the one place a command's text output
    passes through the terminal filter (team data prints its control characters as escapes).
    `styled`: `human` added swarm's own colours (and made the data in it visible itself)."""
    if as_json:
        click.echo(json.dumps(to_jsonable(data), indent=2))
    else:
        text = human(data)
        if text:
            click.echo(visible(text, styles=styled))


def table(rows: list[list[str]], headers: list[str]) -> str:
    """A plain aligned table, cells whole (rich is kept for the live view: slow to import)."""
    from swarm.core.text.tables import render as render_table

    return render_table(rows, headers).text


def wide_option(func: F) -> F:
    return click.option("--wide", is_flag=True,
                        help="Show every column and cell whole (default: fit the terminal).")(func)


def fit_table(rows: list[list[str]], headers: list[str], wide: bool,
              optional: tuple[str, ...] = (), stretch: tuple[str, ...] = ()) -> str:
    """A table that fits the terminal (`optional` columns go first, then long cells end in
    `…`, `stretch` ones first), whole with --wide or when stdout is no terminal (a pipe)."""
    from swarm.core.text.tables import render as render_table  # the commands that draw a table

    width = None if wide else terminal_width()
    drawn = render_table(rows, headers, width, optional, stretch)
    if drawn.cut and width is not None and width >= len(WIDE_HINT):
        return f"{drawn.text}\n{WIDE_HINT}"
    return drawn.text


WIDE_HINT = "(cut to fit: --wide shows all)"


def fit_lines(text: str, wide: bool) -> str:
    """Lines around a table (a header, notes), cut to the terminal like its cells."""
    from swarm.core.text.tables import cut as cut_line

    width = None if wide else terminal_width()
    return text if width is None else "\n".join(cut_line(ln, width) for ln in text.split("\n"))


def terminal_width() -> int | None:
    """$COLUMNS, else the width of the terminal on stdout; None when stdout is no terminal."""
    import shutil  # it loads bz2 and lzma (to know what it can archive): not for every command

    columns = shutil.get_terminal_size((0, 0)).columns
    return columns if columns > 0 else None
