"""`swarm top` in a real tmux pane (80x24, a plain bash with its own HOME): it starts, shows the
team, `y` approves a waiting shell teammate's command, and `q` (or a SIGTERM) leaves the
terminal as it was: main screen, cursor shown, no mouse tracking, the same stty settings, a
shell that runs the next command."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from swarm.ops.approvals import pending_permissions
from tests.support.agent_fixtures import Crew
from tests.support.helpers import wait_until

VENV_BIN = str(Path(sys.executable).parent)
_names = itertools.count()


class Pane:
    def __init__(self, socket: str) -> None:
        self.socket = socket

    def tmux(self, *args: str) -> str:
        proc = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True,
                              text=True, timeout=30)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    def show(self, fmt: str) -> str:
        return self.tmux("display-message", "-p", "-t", "t", fmt).strip()

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "t")

    def type(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "t", *keys)

    def app_pid(self) -> int | None:
        shell = psutil.Process(int(self.show("#{pane_pid}")))
        found = [p for p in shell.children(recursive=True)
                 if any(a == "top" for a in p.cmdline()[1:])]
        return found[0].pid if found else None


@pytest.fixture
def pane(tmp_path: Path) -> Iterator[Pane]:
    home = tmp_path / "home"
    home.mkdir()
    socket = f"swarm-top-test-{os.getpid()}-{next(_names)}"
    env = {"HOME": str(home), "PATH": f"{VENV_BIN}:/usr/bin:/bin", "TERM": "xterm-256color",
           "SWARM_HOME": os.environ["SWARM_HOME"], "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
           "PS1": "$ "}
    command = ["env", "-i", *(f"{k}={v}" for k, v in env.items()),
               "bash", "--noprofile", "--norc"]
    subprocess.run(["tmux", "-L", socket, "-f", "/dev/null", "new-session", "-d", "-s", "t",
                    "-x", "80", "-y", "24", *command], check=True, timeout=30, cwd=tmp_path)
    result = Pane(socket)
    result.tmux("set", "-g", "status", "off")
    try:
        yield result
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], capture_output=True, timeout=30)


def start_top(pane: Pane, crew: Crew, marker: str) -> None:
    pane.type(f"cd {crew.workdir} && stty -g > {marker}; swarm top --team {crew.team.name}",
              "Enter")
    wait_until(lambda: pane.show("#{alternate_on}") == "1", 20, message="the app's screen")


def left_usable(pane: Pane, before: str, tag: str) -> None:
    """Back at the shell with the terminal as it was before the app."""
    wait_until(lambda: pane.show("#{pane_current_command}") == "bash", 20,
               message="the shell back")
    assert pane.show("#{alternate_on}") == "0"
    assert pane.show("#{cursor_flag}") == "1"
    assert pane.show("#{mouse_any_flag}") == "0" and pane.show("#{mouse_sgr_flag}") == "0"
    pane.type(f"stty -g > {before}.after; cmp {before} {before}.after && echo {tag}-$((1+1))",
              "Enter")
    wait_until(lambda: f"{tag}-2" in pane.screen(), 10,
               message=f"the shell answering ({pane.screen()})")


def test_top_in_tmux_shows_the_team_y_approves_and_q_leaves_the_terminal_usable(
        crew: Crew, pane: Pane, tmp_path: Path) -> None:
    crew.spawn("w1", prompt="$ echo x > f.txt", permission_mode="default")
    crew.spawn("w2")
    wait_until(lambda: pending_permissions(crew.team), 20, message="w1's request")
    start_top(pane, crew, str(tmp_path / "stty"))
    wait_until(lambda: "Needs you" in pane.screen() and "echo x > f.txt" in pane.screen()
               and "w2" in pane.screen(), 20, message="the team on screen")
    assert not (crew.workdir / "f.txt").exists()
    pane.type("y")
    wait_until((crew.workdir / "f.txt").exists, 20, message="f.txt after y")
    wait_until(lambda: "approved Bash for w1" in pane.screen(), 10, message="the result line")
    pane.type("q")
    left_usable(pane, str(tmp_path / "stty"), "quit")


def test_a_sigterm_also_leaves_the_terminal_usable(crew: Crew, pane: Pane, tmp_path: Path) -> None:
    crew.spawn("w1")
    start_top(pane, crew, str(tmp_path / "stty"))
    wait_until(lambda: "w1" in pane.screen(), 20, message="the team on screen")
    pid = wait_until(pane.app_pid, 10, message="the app's pid")
    os.kill(pid, signal.SIGTERM)
    left_usable(pane, str(tmp_path / "stty"), "term")
