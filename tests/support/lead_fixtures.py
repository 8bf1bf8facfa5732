"""What the `swarm lead` tests share: the environment a lead runs in, and running one headless."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.agent_fixtures import agent_processes, stop_tree
from tests.support.cli_runner import SWARM


@pytest.fixture
def lead_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, swarm_home: Path) -> Iterator[None]:
    """A fake API key, fast retries and heartbeats; no `swarm agent` process outlives the test."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("SWARM_API_RETRY_BASE", "0.01")
    monkeypatch.setenv("HOME", str(tmp_path))  # no user-level Anthropic profile can leak in
    monkeypatch.setenv("SWARM_SHUTDOWN_GRACE", "5")
    monkeypatch.setenv("SWARM_HEARTBEAT_INTERVAL", "0.2")
    try:
        yield
    finally:
        for proc in agent_processes(swarm_home):
            stop_tree(proc.pid)


def lead(*args: str, cwd: Path, timeout: float = 90, env: dict[str, str] | None = None,
         backend: str = "hidden", model: str = "sonnet") -> subprocess.CompletedProcess[str]:
    """`swarm lead --headless` with a sonnet lead (the fake API; or `model`, e.g. a
    `scripted:` one) and `shell` teammates."""
    argv = [SWARM, "lead", "--headless", "--model", model, "--teammate-model", "shell",
            "--backend", backend, *args]
    return subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=timeout,
                          env={**os.environ, **(env or {})})
