"""`swarm trust [DIR] [--yes]`, `--list`, `--revoke [DIR]`: review and trust a project's
configuration (hooks, MCP servers, agent definitions), and the lead's question before a session.
Everything a checkout wrote is shown through `visible` (control characters escaped)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from swarm.cli.common import emit, json_option, table
from swarm.cli.helptext import examples
from swarm.core.text.terminal import visible_line
from swarm.core.trust.summary import TrustSummary, summarize
from swarm.core.trust.workspace import TrustDecision, decide, record, trusted_projects
from swarm.core.trust.workspace import revoke as revoke_trust
from swarm.errors import BadInputError

QUESTION = ("Trust this project's configuration? Its hooks and MCP servers will run and its agent"
            " definitions apply, until one of these files changes")


def render(summary: TrustSummary) -> str:
    """The summary for a terminal: every value from the checkout escaped, one item a line."""
    v = visible_line
    lines = [f"Project: {v(summary.root or '-')}",
             f"Project configuration ({len(summary.files)} file(s), digest {summary.digest[:12]}):",
             *[f"  {v(name)}" for name in summary.files]]
    if summary.hooks:
        lines.append("Hooks and commands (shell commands run on agent events or by an agent CLI):")
        lines += [f"  {v(h.event)}{f' [{v(h.matcher)}]' if h.matcher else ''}: {v(h.command)}"
                  f"    ({v(h.file)})" for h in summary.hooks]
    if summary.servers:
        lines.append("MCP servers (started with the agents that use them):")
        for server in summary.servers:
            target = server.command if server.command is not None else f"url {server.url}"
            lines.append(f"  {v(server.name)}: {v(target or '-')}    ({v(server.file)})")
            if server.env:
                lines.append("      env: " + ", ".join(f"{v(k)}={v(val)}"
                                                       for k, val in server.env.items()))
    if summary.definitions:
        lines.append("Agent definitions:")
        for d in summary.definitions:
            tools = "all" if d.tools is None else ", ".join(d.tools) or "(team only)"
            if d.disallowed_tools:
                tools += f" minus {', '.join(d.disallowed_tools)}"
            parts = [f"mode {d.permission_mode or 'default'}", f"tools {tools}"]
            if d.mcp_servers:
                parts.append(f"servers {', '.join(d.mcp_servers)}")
            if d.model:
                parts.append(f"model {d.model}")
            lines.append(f"  {v(d.name)}: {v('; '.join(parts))}    ({v(d.file)})")
    if summary.variables:
        lines.append("Variables set for an agent CLI (names only):")
        lines += [f"  {v(x.name)}    ({v(x.file)})" for x in summary.variables]
    lines += [f"Problem: {v(p)}" for p in summary.problems]
    return "\n".join(lines)


def _warn(text: str) -> None:
    click.echo(f"swarm: warning: {text}", err=True)


def review_for_lead(cwd: str | None, interactive: bool, flag: bool) -> None:
    """Before `swarm lead` starts: an untrusted project is shown and asked about once in a
    terminal (yes records the trust), else its configuration is ignored, in one stderr line."""
    workdir = Path(cwd or os.getcwd()).expanduser()
    if not workdir.is_dir():
        return  # the lead reports a bad --cwd itself
    decision = decide(workdir, flag=flag)
    if decision.warning:
        _warn(decision.warning)
    if decision.trusted:
        return
    if interactive:
        click.echo(render(summarize(decision.config)))
        if click.confirm(QUESTION, default=False):
            record(decision.config)
            click.echo(f"trusted {visible_line(str(decision.config.root))}")
            return
    _say_ignored(decision)


def say_if_ignored(cwd: str | Path | None) -> None:
    """For listings (`agents list`, `mcp list`): one line when the project's files are ignored."""
    workdir = Path(cwd or os.getcwd()).expanduser()
    if workdir.is_dir():
        decision = decide(workdir)
        if decision.warning:
            _warn(decision.warning)
        _say_ignored(decision)


def _say_ignored(decision: TrustDecision) -> None:
    notice = decision.notice()
    if notice:
        _warn(notice)


@click.command(epilog=examples(
    "swarm trust", "swarm trust ~/src/project --yes", "swarm trust --list",
    "swarm trust --revoke"))
@click.argument("directory", required=False)
@click.option("--yes", "-y", is_flag=True, help="Trust it without asking (after showing it).")
@click.option("--list", "list_them", is_flag=True, help="List the trusted projects.")
@click.option("--revoke", is_flag=True, help="Stop trusting DIR's project.")
@json_option
def trust(directory: str | None, yes: bool, list_them: bool, revoke: bool, as_json: bool) -> None:
    """Show what the project's configuration would do, and trust it.

    Project configuration is what a checkout carries that runs commands or raises rights for
    any kind of teammate: .swarm/settings.json and .claude/settings.json (hooks), .mcp.json
    (MCP servers), .swarm/agents/*.md and .claude/agents/*.md (agent definitions), the agent
    CLIs' own (.claude/, .codex/config.toml, .gemini/), found from DIR (default: here) up to
    the git root. Until it is trusted, `swarm spawn`, `swarm lead` and teammates
    ignore it. Trust is bound to those files: a changed or new file needs trusting again.
    For one run only (CI on your own repository): --trust-project or SWARM_TRUST_PROJECT=1.
    """
    if list_them:
        if directory or yes or revoke:
            raise BadInputError("--list takes no DIR, --yes or --revoke")
        _list(as_json)
        return
    workdir = Path(directory or os.getcwd()).expanduser()
    if not workdir.is_dir():
        raise BadInputError(f"{visible_line(str(workdir))} is not a directory")
    decision = decide(workdir.resolve())
    if decision.warning:
        _warn(decision.warning)
    root = decision.config.root
    if revoke:
        if root is None or not _revoke(root):
            click.echo(f"{visible_line(str(root or workdir))} was not trusted")
        return
    config = decision.config
    if not config.files:
        click.echo(f"no project configuration in {visible_line(str(root or workdir))}: nothing to trust")
        return
    summary = summarize(config)
    if as_json:
        if yes:
            record(config)
        emit({**summary.model_dump(mode="json"), "trusted": yes or decision.state == "trusted"},
             True, str)
        return
    click.echo(render(summary))
    if decision.reason == "trusted" and not yes:  # recorded with this very digest
        click.echo(f"already trusted: {visible_line(str(root))}")
        return
    if not yes:
        if not sys.stdin.isatty():
            raise BadInputError("not asking without a terminal: review the above, then"
                                " `swarm trust --yes` trusts it")
        if not click.confirm(QUESTION, default=False):
            click.echo("not trusted: its configuration stays ignored")
            return
    entry = record(config)
    click.echo(f"trusted {visible_line(str(root))} (digest {entry.digest[:12]})")


def _revoke(root: Path) -> bool:
    if not revoke_trust(root):
        return False
    click.echo(f"no longer trusted: {visible_line(str(root))}")
    return True


def _list(as_json: bool) -> None:
    rows, warning = trusted_projects()
    if warning:
        _warn(warning)

    def human(_: Any) -> str:
        if not rows:
            return "no trusted projects"
        return table([[visible_line(r.root), r.state, r.digest[:12], r.trusted_at,
                       visible_line(", ".join(r.files))] for r in rows],
                     ["ROOT", "STATE", "DIGEST", "TRUSTED AT", "FILES"])

    emit(rows, as_json, human)
