"""`swarm completion bash|zsh|fish`, and what a Tab completes: team names, member names, task ids.

The script is Click's own (click.shell_completion): the shell runs `swarm` again with
_SWARM_COMPLETE set, and Click calls the `shell_complete` callbacks below for the word under the
cursor. They read the team files as plain JSON (no models, no locks) and give nothing, never an
error, when anything is missing or unreadable: a Tab must not print a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from swarm import settings
from swarm.core.store import paths

if TYPE_CHECKING:  # click.shell_completion is imported by a Tab, not by every command
    from click.shell_completion import CompletionItem

SHELLS = ("bash", "zsh", "fish")
Completer = Callable[[click.Context, click.Parameter, str], list[Any]]


def _quiet(find: Callable[[click.Context, str], Iterator[CompletionItem]]) -> Completer:
    """`find`'s items that start with what was typed; none at all if reading failed."""

    def complete(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
        try:
            return [item for item in find(ctx, incomplete)
                    if str(item.value).startswith(incomplete)]
        except Exception:  # a Tab prints completions or nothing, never an error
            return []

    return complete


def _read(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def _team_of(ctx: click.Context) -> str | None:
    """The team the command line names so far (--team), else $SWARM_TEAM."""
    while ctx is not None:
        name = ctx.params.get("team_name")
        if name:
            return str(name).lower()
        ctx = ctx.parent  # type: ignore[assignment]
    return (settings.team() or "").lower() or None


def _teams(ctx: click.Context, incomplete: str) -> Iterator[CompletionItem]:
    from click.shell_completion import CompletionItem

    for config in sorted(paths.teams_dir().glob("*/config.json")):
        try:
            about = str(_read(config).get("description") or "")
        except (OSError, ValueError, AttributeError):
            about = ""
        yield CompletionItem(config.parent.name, help=about or None)


def _members(ctx: click.Context, incomplete: str) -> Iterator[CompletionItem]:
    from click.shell_completion import CompletionItem

    team = _team_of(ctx)
    if team is None:
        return
    for member in _read(paths.team_config(team)).get("members", []):
        yield CompletionItem(member["name"], help=member.get("agent_type") or None)


def _tasks(ctx: click.Context, incomplete: str) -> Iterator[CompletionItem]:
    from click.shell_completion import CompletionItem

    team = _team_of(ctx)
    if team is None:
        return
    found = [p for p in paths.tasks_dir(team).glob("*.json") if p.stem.isdigit()]
    for path in sorted(found, key=lambda p: int(p.stem)):
        try:
            task = _read(path)
            about = f"{task.get('status', '')}: {task.get('subject', '')}"
        except (OSError, ValueError, AttributeError):
            about = ""
        yield CompletionItem(path.stem, help=about or None)


complete_team = _quiet(_teams)
complete_member = _quiet(_members)
complete_task = _quiet(_tasks)
# `send '*'` (everyone) is not offered: Click's bash script would expand it to file names.


@click.command(epilog="""\b
Examples:
  swarm completion bash > ~/.local/share/bash-completion/completions/swarm
  echo 'eval "$(swarm completion zsh)"' >> ~/.zshrc
  swarm completion fish > ~/.config/fish/completions/swarm.fish""")
@click.argument("shell", type=click.Choice(SHELLS), metavar="SHELL")
def completion(shell: str) -> None:
    """Print the shell completion script for bash, zsh or fish.

    Tab then completes commands and options, and team names, member names and task ids
    from $SWARM_HOME (the team from --team or $SWARM_TEAM).
    """
    from click.shell_completion import get_completion_class

    from swarm.cli.main import cli

    script = get_completion_class(shell)
    assert script is not None  # every shell in SHELLS is one of Click's
    click.echo(script(cli, {}, "swarm", "_SWARM_COMPLETE").source())
