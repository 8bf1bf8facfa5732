"""`swarm completion bash|zsh|fish`, and what a Tab completes: team names, member names, task
ids, models (names and `PROVIDER:` prefixes), backends, pending permission requests, and `'*'`
(everyone) for `send`. Modes are Click choices: Click completes them itself.

The script is Click's own (click.shell_completion): the shell runs `swarm` again with
_SWARM_COMPLETE set, and Click calls the `shell_complete` callbacks below for the word under the
cursor. They read the team files as plain JSON (no models, no locks) and give nothing, never an
error, when anything is missing or unreadable: a Tab must not print a traceback.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from swarm import settings
from swarm.core.records.names import (
    BACKENDS,
    LEAD_NAME,
    MODEL_ALIASES,
    MODEL_PROVIDERS,
    NAME_RE,
    OFFLINE_MODELS,
)
from swarm.core.store import paths
from swarm.core.text.terminal import visible_line

if TYPE_CHECKING:  # click.shell_completion is imported by a Tab, not by every command
    from click.shell_completion import CompletionItem

SHELLS = ("bash", "zsh", "fish")
REQUEST_ID = re.compile(r"[0-9a-f-]{8,64}")  # a request id as swarm makes them (a uuid)
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


def _recipients(ctx: click.Context, incomplete: str) -> Iterator[CompletionItem]:
    """The members, and everyone: `'*'` quoted for bash, whose script would expand a bare `*`
    to file names; zsh and fish quote what they insert themselves."""
    from click.shell_completion import CompletionItem

    if _team_of(ctx) is None:
        return
    yield from _members(ctx, incomplete)
    bash = settings.raw("_SWARM_COMPLETE").startswith("bash")
    yield CompletionItem("'*'" if bash else "*", help="every member")


def _models(ctx: click.Context, incomplete: str) -> Iterator[CompletionItem]:
    from click.shell_completion import CompletionItem

    for alias, model_id in MODEL_ALIASES.items():
        yield CompletionItem(alias, help=model_id)
    yield CompletionItem(OFFLINE_MODELS[0], help="offline: runs the `$ ` lines it is sent")
    yield CompletionItem(OFFLINE_MODELS[1], help="offline: scripted:PATH, a script of turns")
    for provider in MODEL_PROVIDERS:
        yield CompletionItem(f"{provider}:", help=f"{provider}:MODEL")


def _teammate_models(ctx: click.Context, incomplete: str) -> Iterator[CompletionItem]:
    from click.shell_completion import CompletionItem

    yield CompletionItem("inherit", help="the lead's model")
    yield from _models(ctx, incomplete)


def _backends(ctx: click.Context, incomplete: str) -> Iterator[CompletionItem]:
    from click.shell_completion import CompletionItem

    yield CompletionItem("auto", help="tmux inside tmux, else iTerm2, tmux or hidden")
    for backend in BACKENDS:
        yield CompletionItem(f"{backend}:" if backend == "ssh" else backend,
                             help="ssh:[USER@]HOST[:PORT]" if backend == "ssh" else None)


def _requests(ctx: click.Context, incomplete: str) -> Iterator[CompletionItem]:
    """The pending permission requests in the lead's mailbox (file store: JSON Lines, unread,
    from the member they name): each id as its shortest unique start of 8 characters or more,
    then each member asking exactly once (by name, `approve NAME` is that request)."""
    from click.shell_completion import CompletionItem

    team = _team_of(ctx)
    if team is None:
        return
    pending: list[tuple[str, str, str]] = []  # (request id, member, tool)
    for line in paths.inbox(team, LEAD_NAME).read_text(encoding="utf-8").splitlines():
        try:
            message = json.loads(line)
            request = json.loads(message["text"]) if not message.get("read") else None
        except (ValueError, KeyError, TypeError):
            continue
        if not isinstance(request, dict) or request.get("type") != "permission_request":
            continue
        name, _, its_team = str(request.get("agent_id", "")).partition("@")
        rid = str(request.get("request_id", ""))
        # What a Tab inserts is typed into the person's command line: a forged line's id or
        # name that is more than an id or a name is never offered.
        if (name == message.get("from") and its_team == team and REQUEST_ID.fullmatch(rid)
                and NAME_RE.fullmatch(name)):
            pending.append((rid, name, str(request.get("tool_name"))))
    ids = [rid for rid, _, _ in pending]
    for rid, name, tool in pending:
        size = 8
        while size < len(rid) and sum(other.startswith(rid[:size]) for other in ids) > 1:
            size += 1
        yield CompletionItem(rid[:size], help=visible_line(f"{name}: {tool}"))  # team data
    names = [name for _, name, _ in pending]
    for name in dict.fromkeys(names):
        if names.count(name) == 1:
            yield CompletionItem(name, help="its one pending request")


complete_team = _quiet(_teams)
complete_member = _quiet(_members)
complete_task = _quiet(_tasks)
complete_recipient = _quiet(_recipients)
complete_model = _quiet(_models)
complete_teammate_model = _quiet(_teammate_models)
complete_backend = _quiet(_backends)
complete_request = _quiet(_requests)


@click.command(epilog="""\b
Examples:
  swarm completion bash > ~/.local/share/bash-completion/completions/swarm
  echo 'eval "$(swarm completion zsh)"' >> ~/.zshrc
  swarm completion fish > ~/.config/fish/completions/swarm.fish""")
@click.argument("shell", type=click.Choice(SHELLS), metavar="SHELL")
def completion(shell: str) -> None:
    """Print the shell completion script for bash, zsh or fish.

    Tab then completes commands and options, and team names, member names, task ids and
    pending permission requests from $SWARM_HOME (the team from --team or $SWARM_TEAM);
    models, backends and modes; and '*' (everyone) for `swarm send`.
    """
    from click.shell_completion import get_completion_class

    from swarm.cli.main import cli

    script = get_completion_class(shell)
    assert script is not None  # every shell in SHELLS is one of Click's
    click.echo(script(cli, {}, "swarm", "_SWARM_COMPLETE").source())
