"""`swarm config show`: the user's lasting defaults ($SWARM_HOME/config.toml) and where each
default a command takes comes from."""

from __future__ import annotations

from typing import Any

import click

from swarm import settings
from swarm.cli.common import emit, json_option, table
from swarm.cli.helptext import examples
from swarm.core.trust.user_config import describe
from swarm.errors import BadInputError
from swarm.ops.user_defaults import check_user_config


@click.group(epilog=examples("swarm config show", "swarm config show --json"))
def config() -> None:
    """Show the user's defaults ($SWARM_HOME/config.toml)."""


@config.command("show", epilog=examples("swarm config show", "swarm config show --json"))
@json_option
def show(as_json: bool) -> None:
    """Each default (model, backend, permission mode, lasting rules) and where it comes from:
    a variable, config.toml, or swarm's default. Flags on a command win over all of them.

    Each value of config.toml is checked as the commands would: a bad one is an error naming
    the file and the key (exit 2), after the table.
    """
    user = settings.user_config()
    checked = check_user_config()
    rows = describe()
    for warning in checked.warnings:
        click.echo(f"swarm: warning: {warning}", err=True)
    data = {"path": str(user.path), "exists": user.exists, "problems": checked.problems,
            "warnings": checked.warnings,
            "settings": [{"key": r.key, "value": r.value, "source": r.source} for r in rows]}

    def human(_: Any) -> str:
        head = f"{user.path}" + ("" if user.exists else " (none: every default is swarm's own)")
        return head + "\n" + table([[r.key, r.value, r.source] for r in rows],
                                   ["SETTING", "VALUE", "FROM"])

    emit(data, as_json, human)
    if checked.problems:  # one line each; the last is the error the exit code comes from
        for problem in checked.problems[:-1]:
            click.echo(f"swarm: error: {problem}", err=True)
        raise BadInputError(checked.problems[-1])
