"""Terminal safety: control characters that come from team data (a message, a summary, a task, a
team description, a state's detail, tool output, a transcript, a log) reach a terminal as
visible escapes (`\x1b`), never raw: no clipboard write (OSC 52), no title change, no screen
clear. Swarm's own colours still work, and `--json` gives the data back unchanged.

The tests of tests/unit/core/text/test_terminal_safety.py that start processes."""

# ruff: noqa: F811 - the fixtures are imported from the unit module and used by name

from __future__ import annotations

import json
import os
import subprocess

import pytest
from libtmux.server import Server
from libtmux.session import Session

from swarm.core.store.liveness import is_alive
from swarm.core.team.team import Team
from tests.support.helpers import wait_until
from tests.unit.core.text.test_terminal_safety import wide_terminal  # noqa: F401 - the fixtures


# -- a real pane --------------------------------------------------------------------------------
def test_a_teammates_pane_shows_escapes_and_keeps_its_title(
        server: Server, session: Session, monkeypatch: pytest.MonkeyPatch) -> None:
    """A shell teammate in a real tmux pane prints a title change, a clipboard write and a clear
    screen with its command; a message to it carries a title change too. The pane shows them as
    text, and tmux's pane title stays the teammate's name."""
    from tests.support.agent_fixtures import stop_tree
    from tests.support.cli_runner import SWARM
    from tests.system.tmux.test_tmux_cli import SHELL, ok, panes, tmux

    monkeypatch.setenv("SWARM_TMUX_SOCKET", str(server.socket_name))
    env = {**os.environ, "SWARM_TMUX_SOCKET": str(server.socket_name), "SWARM_TEAM": "alpha"}
    Team.create("alpha")
    prompt = ("$ printf 'out \\033]0;pwned\\007 \\033]52;c;aGVsbG8=\\007 \\033[2J done\\n'\n"
              "note \x1b]2;pwned2\x07 in the message")
    spawned = json.loads(ok(env, "spawn", "w1", "--backend", "tmux", *SHELL, "--json",
                            "--prompt", prompt))
    pane = spawned["pane_id"]

    def screen() -> str:
        return "\n".join(tmux(server, "capture-pane", "-p", "-J", "-S", "-", "-t", pane))

    try:
        wait_until(lambda: "idle (available)" in screen(), 20, message=f"w1 idle:\n{screen()}")
        assert panes(server)[pane]["pane_title"] == "w1"  # nothing retitled it
        text = screen()
        assert "| out \\x1b]0;pwned\\x07 \\x1b]52;c;aGVsbG8=\\x07 \\x1b[2J done" in text
        assert "note \\x1b]2;pwned2\\x07 in the message" in text
    finally:
        subprocess.run([SWARM, "shutdown", "w1", "--team", "alpha"], env=env,
                       capture_output=True, timeout=60)
        if is_alive(spawned["pid"]):
            stop_tree(spawned["pid"])
