"""`swarm lead`: the LLM team lead, in a terminal or headless (CI)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from swarm.cli.completion import (
    complete_backend,
    complete_model,
    complete_team,
    complete_teammate_model,
)
from swarm.cli.helptext import examples
from swarm.cli.replay import record_option, start_recording
from swarm.cli.trust import review_for_lead
from swarm.core.records.names import EFFORT_LEVELS
from swarm.core.trust.user_config import default_mode
from swarm.errors import OperationFailedError, SessionInterrupted, WaitTimeoutError
from swarm.lead.headless import print_outcome, run_headless
from swarm.lead.interactive import run_interactive
from swarm.lead.options import LEAD_MODES, LeadOptions


@click.command(epilog=examples(
    "swarm lead",
    "swarm lead 'split the test suite into fast and slow' --headless --json",
    "swarm lead --model scripted:lead.json --teammate-model shell --headless 'demo'",
    "swarm lead --team alpha --resume"))
@click.argument("prompt", required=False)
@click.option("--team", "-t", "team_name", default=None, shell_complete=complete_team,
              help="Team to create (default: a generated name), or to continue with --resume.")
@click.option("--model", "-m", default=None, shell_complete=complete_model,
              help="The lead's model: sonnet|opus|haiku|claude-...|PROVIDER:MODEL|scripted:PATH.")
@click.option("--teammate-model", default="inherit", show_default=True,
              shell_complete=complete_teammate_model,
              help="Teammates' model ([PROVIDER:]MODEL); inherit: the lead's (a scripted lead's:"
              " $SWARM_MODEL, sonnet with a key, else shell).")
@click.option("--effort", type=click.Choice(EFFORT_LEVELS, case_sensitive=False), default=None,
              help="How hard the lead thinks (default: config.toml's effort). Teammates: their"
              " own (--effort on spawn, SpawnTeammate's effort, their definition's).")
@click.option("--allow", multiple=True, metavar="RULE",
              help="Allow rule for the lead and its teammates, e.g. 'Bash(npm test:*)'.")
@click.option("--deny", multiple=True, metavar="RULE", help="Deny rule (wins over allow).")
@click.option("--ask", multiple=True, metavar="RULE",
              help="Ask rule: a person decides, in every mode, e.g. 'Bash(git push:*)'.")
@click.option("--reviewer", default=None, metavar="WHO",
              help="auto's reviewer for the lead and its teammates: command:PROG, model:NAME,"
              " lead or none.")
@click.option("--backend", default=None, shell_complete=complete_backend, metavar="auto|tmux|iterm2|hidden|ssh:[USER@]HOST[:PORT]",
              help="Where teammates run (default: $SWARM_BACKEND or auto).")
@click.option("--cwd", default=None, help="Working directory of the lead and its teammates.")
@click.option("--approvals", type=click.Choice(["human", "lead"]), default="human",
              show_default=True, help="Who answers teammates' permission requests and plans.")
@click.option("--coordinator", is_flag=True, help="The lead has only team tools: it delegates.")
@click.option("--permission-mode", type=click.Choice(LEAD_MODES), default=None,
              help="The lead's own tool use, and the most it grants a teammate; teammates start"
              " in it (or lower) with its rules. Default: config.toml's permission_mode, else"
              " default.")
@click.option("--headless", is_flag=True,
              help="Run PROMPT to the end without a terminal (also when stdin is not a tty).")
@click.option("--json", "as_json", is_flag=True, help="Headless: print one JSON object.")
@click.option("--timeout", type=float, default=None, help="Headless: give up after S seconds (exit 124).")
@click.option("--max-teammates", type=int, default=8, show_default=True,
              help="Teammates running at once.")
@click.option("--max-budget-usd", type=float, default=None,
              help="Stop the lead once the team has spent this much.")
@click.option("--keep", is_flag=True, help="Keep the team (and transcript) at the end.")
@click.option("--resume", is_flag=True, help="Continue the lead of --team from its transcript.")
@click.option("--trust-project", is_flag=True,
              help="Trust the project's hooks, servers and definitions for this run only.")
@click.option("--report", "report_path", type=click.Path(dir_okay=False, path_type=Path),
              default=None, help="At the end, write the run report (as `swarm report --html`)"
              " to this file.")
@record_option
def lead(prompt: str | None, team_name: str | None, model: str | None,
         teammate_model: str | None, backend: str | None, cwd: str | None, approvals: str,
         coordinator: bool, headless: bool, as_json: bool, timeout: float | None,
         max_teammates: int, max_budget_usd: float | None, keep: bool, resume: bool,
         trust_project: bool, report_path: Path | None, permission_mode: str | None,
         allow: tuple[str, ...], deny: tuple[str, ...], ask: tuple[str, ...],
         reviewer: str | None, record: Path | None, effort: str | None) -> None:
    """An LLM lead turns one request into a coordinated team.

    In a terminal: type requests; the lead spawns teammates, hands out tasks, reacts to their
    reports and answers you. Headless (--headless, or stdin not a terminal): runs PROMPT, prints
    the lead's final text (or --json), exits 0 done, 1 failed or unfinished, 124 timeout.
    The lead can also start subagents (the Agent tool); --report FILE writes the run report.
    """
    interactive = not headless and sys.stdin.isatty() and sys.stdout.isatty()
    if not interactive and not prompt and not sys.stdin.isatty():
        prompt = sys.stdin.read().strip() or None
    start_recording(record, {"prompt": prompt})
    options = LeadOptions(
        prompt=prompt, team=team_name, model=model, teammate_model=teammate_model,
        backend=None if backend == "auto" else backend, cwd=cwd, approvals=approvals,
        coordinator=coordinator, headless=not interactive, as_json=as_json, timeout=timeout,
        max_teammates=max_teammates, max_budget_usd=max_budget_usd, keep=keep, resume=resume,
        report=report_path.absolute() if report_path is not None else None,
        permission_mode=permission_mode or default_mode(LEAD_MODES) or "default",
        allow=allow, deny=deny, ask=ask, reviewer=reviewer, trust_project=trust_project,
        effort=effort.lower() if effort else None,
    )
    review_for_lead(cwd, interactive, trust_project)  # asks once, or says what it ignores
    if interactive:
        outcome = run_interactive(options, prompt)
    else:
        outcome = run_headless(options, prompt)
        print_outcome(outcome, as_json)
    if outcome.code == 124:
        raise WaitTimeoutError(outcome.error or "timed out")
    if outcome.code == 130:
        raise SessionInterrupted(outcome.error or "interrupted")
    if outcome.code:
        raise OperationFailedError(outcome.error or "the session failed")

