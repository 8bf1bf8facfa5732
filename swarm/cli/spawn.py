"""`swarm spawn`: start a teammate."""

from __future__ import annotations

from pathlib import Path

import click

from swarm.cli.caller import acting_member
from swarm.cli.common import (
    emit,
    json_option,
    mode_cap,
    open_team,
    team_option,
)
from swarm.cli.completion import complete_backend, complete_model
from swarm.cli.helptext import examples
from swarm.cli.replay import record_option, start_recording
from swarm.core.kinds import agent_names
from swarm.core.records.names import EFFORT_LEVELS
from swarm.core.records.permissions import PERMISSION_MODES
from swarm.core.team.team import Team
from swarm.ops.member.spawner import SpawnRequest
from swarm.ops.member.spawner import spawn as do_spawn
from swarm.settings import command_depth


def spawner_depth(team: Team) -> int:
    """The delegation depth of who runs `swarm spawn`: a person 0; a member (the lead's shell)
    its entry's; a subagent's command says its own (SWARM_DEPTH), which is deeper."""
    name = acting_member()
    member = team.config().member(name) if name else None
    return max(member.depth if member else 0, command_depth() if name else 0)


@click.command(epilog=examples(
    "swarm spawn worker --prompt 'add tests for src/parse.py'",
    "swarm spawn reviewer --agent-type explore --model haiku --prompt-file review.md",
    "swarm spawn fixer --worktree --permission-mode acceptEdits --allow 'Bash(make:*)'",
    "swarm spawn runner --model shell --backend hidden",
    "swarm spawn coder --agent claude-code --model sonnet",
    "swarm spawn helper --agent acp --trust-project -- my-agent --acp"))
@click.argument("name")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@team_option
@click.option("--prompt", "-p", default=None, help="First message to the teammate.")
@click.option("--prompt-file", type=click.File("r"), default=None, help="Read the prompt from a file.")
@click.option("--agent-type", default="general-purpose", show_default=True,
              help="Agent definition (see `swarm agents list`).")
@click.option("--model", "-m", default=None, shell_complete=complete_model,
              help="sonnet|opus|haiku|claude-...|PROVIDER:MODEL (anthropic, bedrock, vertex,"
              " openai, ollama)|shell|scripted:PATH.")
@click.option("--agent", "agent", type=click.Choice(agent_names(), case_sensitive=False),
              default=None,
              help="The teammate is this agent CLI, driven headless (default: swarm's own).")
@click.option("--backend", default=None, shell_complete=complete_backend, metavar="auto|tmux|iterm2|hidden|ssh:[USER@]HOST[:PORT]",
              help="Where the teammate runs (default: $SWARM_BACKEND or auto).")
@click.option("--cwd", default=None, help="Working directory (default: here).")
@click.option("--worktree", is_flag=True, help="Work in a new git worktree of --cwd.")
@click.option("--plan-mode-required", is_flag=True, help="Plan first; work after `swarm plans approve`.")
@click.option("--permission-mode",
              type=click.Choice(PERMISSION_MODES),
              default=None, help="What the teammate may do without asking.")
@click.option("--allow", multiple=True, help="Allow rule, e.g. 'Bash(git status:*)'.")
@click.option("--deny", multiple=True, help="Deny rule, e.g. 'Bash(rm:*)'.")
@click.option("--ask", multiple=True, help="Ask rule: a person decides, in every mode, e.g."
              " 'Bash(git push:*)'.")
@click.option("--reviewer", default=None, metavar="WHO",
              help="auto's reviewer: command:PROG, model:NAME, lead or none.")
@click.option("--color", default=None,
              help="Pane and status colour: a name (blue, bright_green, ...) or #rrggbb.")
@click.option("--effort", type=click.Choice(EFFORT_LEVELS, case_sensitive=False), default=None,
              help="How hard it thinks (its provider's thinking or reasoning setting; default:"
              " its definition's, else config.toml's effort).")
@click.option("--max-turns", type=int, default=None, help="Stop after this many model calls.")
@click.option("--max-budget-usd", type=float, default=None,
              help="Stop at this cost (USD, its subagents' included), mid-reply if need be.")
@click.option("--max-tokens", type=int, default=None,
              help="Stop at this many tokens (its subagents' included), mid-reply if need be.")
@click.option("--mcp", "mcp", multiple=True, metavar="NAME",
              help="Give the teammate this MCP server (see `swarm mcp list`); repeatable.")
@click.option("--trust-project", is_flag=True,
              help="Trust the project's hooks, servers and definitions for this run only.")
@record_option
@json_option
def spawn(name: str, command: tuple[str, ...], team_name: str | None, prompt: str | None, prompt_file: click.File | None,
          agent_type: str, model: str | None, agent: str | None, backend: str | None, cwd: str | None,
          worktree: bool, plan_mode_required: bool, permission_mode: str | None,
          allow: tuple[str, ...], deny: tuple[str, ...], ask: tuple[str, ...],
          reviewer: str | None, color: str | None,
          max_turns: int | None, max_budget_usd: float | None, max_tokens: int | None,
          mcp: tuple[str, ...], trust_project: bool, as_json: bool,
          record: Path | None, effort: str | None) -> None:
    """Start a teammate NAME in its own pane (or hidden)."""
    if prompt_file is not None:
        prompt = prompt_file.read()  # type: ignore[attr-defined]
    team = open_team(team_name)
    start_recording(record, {"prompt": prompt, "prompt_file": None, "team_name": team.name})
    result = do_spawn(team, SpawnRequest(
        name, prompt=prompt, agent_type=agent_type, model=model,
        backend=backend, cwd=cwd, worktree=worktree, plan_mode_required=plan_mode_required,
        permission_mode=permission_mode, allow=allow, deny=deny, ask=ask, reviewer=reviewer,
        color=color,
        max_turns=max_turns, max_budget_usd=max_budget_usd, max_tokens=max_tokens, mcp=mcp,
        cap=mode_cap(team), depth=spawner_depth(team) + 1,
        trust_project=trust_project, agent=agent, effort=effort,
        agent_command=list(command) or None,
    ))
    for line in result.trust_notices:  # project configuration ignored: one line says so
        click.echo(f"swarm: warning: {line}", err=True)
    if result.notice and not as_json:
        click.echo(f"swarm: note: {result.notice}", err=True)
    for warning in [*result.warnings, *filter(None, [result.effort_warning])]:
        click.echo(f"swarm: warning: {warning}", err=True)

    def human(r: object) -> str:
        return (f"spawned {result.agent_id} (model {result.model}, {result.permission_mode})\n"
                f"backend: {result.backend} ({result.backend_reason})\n"
                f"pane: {result.pane_id or '-'}  pid: {result.pid or '-'}")

    emit(result.as_dict(), as_json, human)
