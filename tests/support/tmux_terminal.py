"""A person at a terminal inside tmux, for the tests of `swarm attach` and of attention: a
`bash --noprofile --norc` pane with its own HOME on the test's private tmux server, and a real
tmux client attached to that server (run from a pane of a second, outer server, so no test ever
touches the developer's tmux)."""

from __future__ import annotations

import itertools
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from libtmux.server import Server

from tests.support.helpers import wait_until
from tests.support.tmux_helpers import tmux

PASS = ("SWARM_HOME", "SWARM_TEAM", "SWARM_TMUX_SOCKET", "PATH", "SWARM_NOTIFY_COMMAND",
        "SWARM_PERMISSION_TIMEOUT", "ANTHROPIC_API_KEY")
_marks = itertools.count()


class Terminal:
    """Shell panes on `server` and the one client that looks at them."""

    def __init__(self, server: Server, outer: Server, home: Path) -> None:
        self.server = server
        self.outer = outer
        self.home = home

    def shell(self, session: str, env: dict[str, str]) -> str:
        """A new session `session` whose one pane runs a plain bash; its pane id."""
        env_args = [a for k in PASS if k in env for a in ("-e", f"{k}={env[k]}")]
        out = tmux(self.server, "new-session", "-d", "-s", session, "-x", "160", "-y", "40",
                   "-P", "-F", "#{pane_id}", *env_args, "-e", f"HOME={self.home}",
                   "bash", "--noprofile", "--norc")
        return out[0]

    def attach(self, session: str) -> str:
        """A real client on `session`: `tmux attach` run in a pane of the outer server."""
        socket = str(self.server.socket_name)
        self.outer.cmd("new-session", "-d", "-s", "client", "-x", "200", "-y", "50",
                       "env", "-u", "TMUX", "tmux", "-L", socket, "attach", "-t", f"={session}")
        return wait_until(lambda: self.clients()[:1], 10, message="a tmux client")[0]

    def clients(self) -> list[str]:
        result = self.server.cmd("list-clients", "-F", "#{client_name}")
        return list(result.stdout) if result.returncode == 0 else []

    def client_at(self) -> tuple[str, str]:
        """(session, window id) the client shows."""
        row = tmux(self.server, "list-clients", "-F", "#{client_session}\t#{window_id}")
        session, window = row[0].split("\t")
        return session, window

    def run(self, pane: str, command: str, timeout: float = 30) -> list[str]:
        """Type `command` in the shell of `pane`; the lines it printed and its exit status."""
        mark = f"done-{next(_marks)}-{uuid.uuid4().hex[:6]}"
        tmux(self.server, "send-keys", "-t", pane, "-l",
             f"{command}; echo {mark}=$?")
        tmux(self.server, "send-keys", "-t", pane, "Enter")

        def finished() -> list[str]:
            lines = tmux(self.server, "capture-pane", "-p", "-J", "-t", pane, "-S", "-200")
            ends = [i for i, line in enumerate(lines) if line.startswith(mark + "=")]
            return lines[: ends[-1] + 1] if ends else []

        lines = wait_until(finished, timeout, interval=0.1, message=f"`{command}` in {pane}")
        start = max(i for i, line in enumerate(lines) if f"echo {mark}" in line)
        return [line for line in lines[start + 1 :] if line.strip()]

    def outer_screen(self) -> str:
        """What the person sees: the outer pane holds the client, status line and all."""
        return "\n".join(tmux(self.outer, "capture-pane", "-p", "-t", "client:"))


@pytest.fixture
def terminal(server: Server, tmp_path: Path) -> Iterator[Terminal]:
    outer = Server(socket_name=f"swarm-outer-{os.getpid()}-{uuid.uuid4().hex[:6]}")
    home = tmp_path / "person"
    home.mkdir()
    try:
        yield Terminal(server, outer, home)
    finally:
        subprocess.run(["tmux", "-L", str(outer.socket_name), "kill-server"],
                       capture_output=True, timeout=30)
