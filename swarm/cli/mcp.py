"""`swarm mcp list [--check]`: configured MCP servers; --check starts each and lists its tools."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from swarm import settings
from swarm.cli.common import emit, json_option, table
from swarm.cli.helptext import examples
from swarm.core.mcp_config import load_mcp_config
from swarm.errors import OperationFailedError
from swarm.ops.mcp import check_servers, describe_servers


@click.group(epilog=examples("swarm mcp list", "swarm mcp list --check"))
def mcp() -> None:
    """MCP servers (from .mcp.json and $SWARM_HOME/mcp.json)."""


@mcp.command("list", epilog=examples(
    "swarm mcp list", "swarm mcp list --check", "swarm mcp list --cwd ~/src/app --json"))
@click.option("--cwd", "cwd", default=None, type=click.Path(file_okay=False),
              help="Find the project's .mcp.json from this directory (default: the current one).")
@click.option("--check", is_flag=True, help="Start each server and list its tools.")
@json_option
def list_servers(cwd: str | None, check: bool, as_json: bool) -> None:
    """List configured MCP servers; a broken entry is a warning and the rest are listed."""
    workdir = Path(cwd or os.getcwd()).expanduser().resolve()
    config = load_mcp_config(workdir)
    for problem in config.problems:
        click.echo(f"swarm: warning: {problem} (skipped)", err=True)
    servers: list[dict[str, Any]] = (check_servers(config, workdir, settings.mcp_timeout())
                                     if check else describe_servers(config))

    def human(_: Any) -> str:
        if not servers:
            where = ", ".join(config.files) or "no .mcp.json here, no $SWARM_HOME/mcp.json"
            return f"no MCP servers configured ({where})"
        headers = ["NAME", "TRANSPORT", "TARGET", "SOURCE"]
        rows = [[s["name"], s["transport"], s["target"], s["source"]] for s in servers]
        if check:
            headers.append("CHECK")
            for row, s in zip(rows, servers, strict=True):
                row.append(f"ok: {len(s['tools'])} tool(s)" if s["state"] == "running"
                           else f"FAILED: {s['error']}")
        lines = [table(rows, headers)]
        for s in servers if check else []:
            lines += [f"  {t['qualified']}: {t['description'].splitlines()[0] if t['description'] else ''}"
                      for t in s["tools"]]
        return "\n".join(lines)

    emit({"servers": servers, "problems": [str(p) for p in config.problems]}, as_json, human)
    failed = [s["name"] for s in servers if check and s["state"] != "running"]
    if failed:
        raise OperationFailedError(f"{len(failed)} of {len(servers)} MCP server(s) failed the "
                                   f"check: {', '.join(failed)}")
