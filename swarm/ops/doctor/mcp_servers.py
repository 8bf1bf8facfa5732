"""`swarm mcp list [--check]`: the configured MCP servers, and whether each starts."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from swarm.core.trust.mcp_config import McpConfig
from swarm.runtime.extensions.mcp_client import McpManager


def describe_servers(config: McpConfig) -> list[dict[str, Any]]:
    return [{"name": s.name, "transport": s.spec.transport, "target": s.spec.describe(),
             "source": s.source} for s in config.servers.values()]


def check_servers(config: McpConfig, cwd: Path, timeout: float) -> list[dict[str, Any]]:
    """Start every configured server (as an agent would, from `cwd`), list its tools, stop it."""
    with tempfile.TemporaryDirectory(prefix="swarm-mcp-check-") as logs:
        manager = McpManager(config.servers, cwd=cwd, log_dir=Path(logs))
        try:
            manager.start(timeout)
            return manager.status()
        finally:
            manager.close()
