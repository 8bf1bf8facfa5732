"""What the tests on a private tmux server (libtmux's `server` and `session` fixtures) share: a
checked tmux command, a window wide enough for a leader and three teammates, and a stand-in
agent a backend starts in a pane."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from libtmux.server import Server

from swarm.backends.tmux import TmuxBackend

REPO = Path(__file__).resolve().parents[2]
# The "agent": prints its arguments on one line, then waits to be killed.
AGENT = "import sys, time; print('AGENT', '|'.join(sys.argv[1:]), flush=True); time.sleep(600)"


def tmux(server: Server, *args: str) -> list[str]:
    result = server.cmd(*args)
    assert result.returncode == 0, result.stderr
    return list(result.stdout)


@pytest.fixture
def wide_session_params() -> dict[str, Any]:
    """libtmux's `session_params` (a module names it so): room for a leader plus three
    teammates, and a known window width for the layout checks."""
    return {"x": 200, "y": 50}


def agent_argv(*args: str) -> list[str]:
    return [sys.executable, "-c", AGENT, *args]


def spawn_agent(backend: TmuxBackend, name: str, *args: str,
                cwd: str | None = None) -> tuple[str, int]:
    """The stand-in agent in a new pane of `backend`: (pane id, pid)."""
    pane = backend.create_pane(name, "green")
    pid = backend.run_in_pane(pane, agent_argv(name, *args), dict(os.environ), cwd or str(REPO))
    assert pid is not None
    return pane, pid
