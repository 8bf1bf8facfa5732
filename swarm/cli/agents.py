"""`swarm agents ...`: list and show agent definitions (built-in < plugin < user < project <
policy; the policy directory is this person's: $SWARM_POLICY_DIR or config.toml's)."""

from __future__ import annotations

from typing import Any

import click

from swarm import settings
from swarm.cli.common import emit, json_option, table
from swarm.cli.helptext import examples
from swarm.cli.trust import say_if_ignored
from swarm.core.agents.agent_definition import AgentDefinition, Definitions
from swarm.core.agents.definitions import get_definition, load_definitions

_cwd_option = click.option(
    "--cwd", "cwd", default=None, type=click.Path(file_okay=False),
    help="Look for project definitions from this directory (default: the current one).",
)


@click.group(epilog=examples("swarm agents list", "swarm agents show explore"))
def agents() -> None:
    """List and show agent definitions."""


def _warn(loaded: Definitions) -> None:
    # A broken file must not break the listing: say what is wrong, keep going (exit 0).
    for problem in loaded.problems:
        click.echo(f"swarm: warning: {problem} (skipped)", err=True)
    for definition in loaded.definitions.values():
        for warning in definition.warnings:
            click.echo(f"swarm: warning: {warning}", err=True)


def _source(definition: AgentDefinition) -> str:
    if not definition.overrides:
        return definition.source
    return f"{definition.source} (overrides {', '.join(s.source for s in definition.overrides)})"


def _tools(definition: AgentDefinition) -> str:
    shown = "all" if definition.tools is None else ", ".join(definition.tools) or "(team only)"
    if definition.disallowed_tools:
        shown += f" minus {', '.join(definition.disallowed_tools)}"
    return shown


@agents.command("list", epilog=examples(
    "swarm agents list", "swarm agents list --cwd ~/src/app --json"))
@_cwd_option
@json_option
def list_agents(cwd: str | None, as_json: bool) -> None:
    """List agent definitions with their source; broken files are reported and skipped."""
    loaded = load_definitions(cwd, policy_dir=settings.policy_dir())
    _warn(loaded)
    say_if_ignored(cwd)  # an untrusted project's definitions are not listed: say so
    definitions = list(loaded.definitions.values())

    def human(_: Any) -> str:
        rows = [[d.name, _source(d), _tools(d), d.model or "-", d.description]
                for d in definitions]
        text = table(rows, ["NAME", "SOURCE", "TOOLS", "MODEL", "DESCRIPTION"])
        notes = [f"{d.name}: {d.path} overrides {s.source} {s.path}"
                 for d in definitions for s in d.overrides]
        return "\n".join([text, "", *notes]) if notes else text

    emit(definitions, as_json, human)


@agents.command("show", epilog=examples(
    "swarm agents show explore", "swarm agents show reviewer --cwd ~/src/app"))
@click.argument("name")
@_cwd_option
@json_option
def show(name: str, cwd: str | None, as_json: bool) -> None:
    """Show one agent definition, including its system prompt."""
    say_if_ignored(cwd)
    definition = get_definition(name, cwd, policy_dir=settings.policy_dir())

    def human(d: AgentDefinition) -> str:
        lines = [
            f"name:             {d.name}",
            f"source:           {d.source} ({d.path})",
        ]
        lines += [f"overrides:        {s.source} ({s.path})" for s in d.overrides]
        lines += [
            f"description:      {d.description or '-'}",
            f"tools:            {'all' if d.tools is None else ', '.join(d.tools) or '(team only)'}",
            f"disallowed_tools: {', '.join(d.disallowed_tools) or '-'}",
            f"model:            {d.model or '-'}",
            f"max_turns:        {d.max_turns or '-'}",
            f"permission_mode:  {d.permission_mode or '-'}",
            f"color:            {d.color or '-'}",
            f"isolation:        {d.isolation or '-'}",
            "",
            d.prompt or "(empty prompt)",
        ]
        return "\n".join(lines)

    emit(definition, as_json, human)
