"""`swarm config show`: the user's lasting defaults ($SWARM_HOME/config.toml) and where each
default a command takes comes from."""

from __future__ import annotations

from typing import Any

import click

from swarm import settings
from swarm.cli.common import emit, json_option, table
from swarm.cli.helptext import examples
from swarm.core.trust.user_config import describe, problems


@click.group(epilog=examples("swarm config show", "swarm config show --json"))
def config() -> None:
    """Show the user's defaults ($SWARM_HOME/config.toml)."""


@config.command("show", epilog=examples("swarm config show", "swarm config show --json"))
@json_option
def show(as_json: bool) -> None:
    """Each default (model, backend, permission mode, lasting rules) and where it comes from:
    a variable, config.toml, or swarm's default. Flags on a command win over all of them."""
    user = settings.user_config()
    found = problems()
    rows = describe()
    for problem in found:
        click.echo(f"swarm: warning: {problem}", err=True)
    data = {"path": str(user.path), "exists": user.exists, "problems": found,
            "settings": [{"key": r.key, "value": r.value, "source": r.source} for r in rows]}

    def human(_: Any) -> str:
        head = f"{user.path}" + ("" if user.exists else " (none: every default is swarm's own)")
        return head + "\n" + table([[r.key, r.value, r.source] for r in rows],
                                   ["SETTING", "VALUE", "FROM"])

    emit(data, as_json, human)
