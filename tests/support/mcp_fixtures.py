"""A real MCP stdio server for tests, built with the `mcp` package's server API (FastMCP, which
SDK 2.x calls MCPServer). It records its pid (PIDFILE) so a test can check it is gone."""

from __future__ import annotations

import sys
from pathlib import Path

from swarm.core.trust.mcp_config import McpServer, McpServerSpec

SERVER_SOURCE = '''
import gc
import os
import sys
import time

gc.disable()  # the SDK's import without the collector's passes, as swarm.big_import does
try:
    from mcp.server.mcpserver import MCPServer as FastMCP  # SDK 2.x
except ImportError:
    from mcp.server.fastmcp import FastMCP  # SDK 1.x
gc.freeze()
gc.enable()

if os.environ.get("PIDFILE"):
    with open(os.environ["PIDFILE"], "a") as handle:
        handle.write(f"{os.getpid()}\\n")
app = FastMCP("calc")


@app.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@app.tool()
def fail(why: str) -> str:
    """Raise an error with this message."""
    raise ValueError(why)


@app.tool()
def die() -> str:
    """End the server process in the middle of the call."""
    os._exit(3)


@app.tool()
def nap(seconds: float) -> str:
    """Sleep, then answer."""
    time.sleep(seconds)
    return "rested"


app.run("stdio")
'''


def write_server(directory: Path) -> Path:
    path = directory / "calc_server.py"
    path.write_text(SERVER_SOURCE)
    return path


def calc_spec(directory: Path, pidfile: Path | None = None) -> McpServerSpec:
    env = {"PIDFILE": str(pidfile)} if pidfile else {}
    return McpServerSpec(command=sys.executable, args=[str(write_server(directory))], env=env)


def calc_server(directory: Path, pidfile: Path | None = None, name: str = "calc") -> McpServer:
    return McpServer(name=name, spec=calc_spec(directory, pidfile), source="test")


def pids(pidfile: Path) -> list[int]:
    try:
        return [int(line) for line in pidfile.read_text().split()]
    except FileNotFoundError:
        return []
