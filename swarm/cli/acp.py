"""`swarm acp`: swarm as an ACP agent (Agent Client Protocol) on stdio, so an editor (Zed, the
JetBrains IDEs, Neovim) drives a whole team as one agent. The editor starts it; its options are
each session's defaults (a session's mode and config options change them)."""

from __future__ import annotations

import asyncio

import click

from swarm.cli.completion import complete_backend, complete_model, complete_teammate_model
from swarm.cli.helptext import examples
from swarm.core.trust.user_config import default_mode
from swarm.lead.options import APPROVALS, LEAD_MODES, LeadOptions, validate


@click.command(epilog=examples(
    "swarm acp",
    "swarm acp --teammate-model haiku --max-teammates 4",
    "swarm acp --model scripted:lead.json --teammate-model shell"))
@click.option("--model", "-m", default=None, shell_complete=complete_model,
              help="The lead's model (as `swarm lead --model`).")
@click.option("--teammate-model", default="inherit", show_default=True,
              shell_complete=complete_teammate_model, help="Teammates' model ([PROVIDER:]MODEL).")
@click.option("--allow", multiple=True, metavar="RULE", help="Allow rule for the lead and its teammates.")
@click.option("--deny", multiple=True, metavar="RULE", help="Deny rule (wins over allow).")
@click.option("--backend", default=None, shell_complete=complete_backend,
              metavar="auto|tmux|iterm2|hidden|ssh:[USER@]HOST[:PORT]",
              help="Where teammates run (default: $SWARM_BACKEND or auto).")
@click.option("--approvals", type=click.Choice(APPROVALS), default="human", show_default=True,
              help="Who answers teammates' requests: human (the editor) or lead (the lead model).")
@click.option("--permission-mode", type=click.Choice(LEAD_MODES), default=None,
              help="The sessions' starting mode. Default: config.toml's permission_mode, else default.")
@click.option("--max-teammates", type=int, default=8, show_default=True,
              help="Teammates running at once.")
@click.option("--max-budget-usd", type=float, default=None,
              help="Stop a session's lead once its team has spent this much.")
@click.option("--coordinator", is_flag=True, help="The lead has only team tools: it delegates.")
def acp(model: str | None, teammate_model: str | None, allow: tuple[str, ...],
        deny: tuple[str, ...], backend: str | None, approvals: str, permission_mode: str | None,
        max_teammates: int, max_budget_usd: float | None, coordinator: bool) -> None:
    """Run swarm as an ACP agent on stdin/stdout, for an editor to start.

    Each editor session is a team with an LLM lead in the editor's working directory; a prompt
    is the lead's input and its turn lasts until the team is quiet. Teammates' requests come to
    the editor; teams are kept for the editor to load again (`swarm team delete` removes one).
    """
    from swarm.acp_server.agent import serve
    from swarm.acp_server.stdio import ProtocolPipes

    base = LeadOptions(
        model=model, teammate_model=teammate_model, allow=allow, deny=deny,
        backend=None if backend == "auto" else backend, approvals=approvals,
        permission_mode=permission_mode or default_mode(LEAD_MODES) or "default",
        max_teammates=max_teammates, max_budget_usd=max_budget_usd, coordinator=coordinator,
        headless=False, keep=True)
    validate(base)  # a bad option is one line and exit 2, before the editor is answered
    pipes = ProtocolPipes()
    asyncio.run(serve(base, pipes))
