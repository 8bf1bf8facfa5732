"""Interactive `swarm lead` in a real terminal: a tmux pane on a private server (libtmux's
`server`/`session` fixtures), driven with send-keys and read with capture-pane. The lead model is
the real SDK against the fake Messages API; teammates run the offline `shell` model."""

from __future__ import annotations

import os
import shlex
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from libtmux.pane import Pane
from libtmux.session import Session

from swarm.core.store import paths
from swarm.core.team.team import Team
from tests.support.agent_fixtures import agent_processes, stop_tree
from tests.support.approval_helpers import REAL, mallory_script, only_as_said
from tests.support.cli_runner import SWARM
from tests.support.fake_anthropic import FakeAnthropic, Scripted, last_user_text, reply
from tests.support.helpers import wait_until
from tests.support.tmux_helpers import wide_session_params

session_params = wide_session_params


@pytest.fixture(autouse=True)
def no_leftovers(swarm_home: Path) -> Iterator[None]:
    yield
    for proc in agent_processes(swarm_home):
        stop_tree(proc.pid)


class Chat:
    """The lead model: spawn two teammates when asked to say hello; hang on "wait for me" until
    released (to be interrupted); acknowledge everything else."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.hanging = threading.Event()

    def __call__(self, body: dict[str, Any]) -> Scripted:
        text = last_user_text(body)
        if text.endswith("please say hello"):
            return reply("Hello! Spawning alice and bob.", [
                ("SpawnTeammate", {"name": "alice", "prompt": "$ echo hi-from-alice",
                                   "permission_mode": "bypassPermissions"}),
                ("SpawnTeammate", {"name": "bob", "prompt": "$ touch made-by-bob.txt",
                                   "permission_mode": "default"})])
        if text.endswith("wait for me"):
            self.hanging.set()
            self.release.wait(30)
            return reply("Too late.")
        return reply("Noted.")


def screen(pane: Pane) -> str:
    """The whole pane, history included (trailing spaces are trimmed: a bare prompt is ">")."""
    return "\n".join(pane.cmd("capture-pane", "-p", "-J", "-S", "-").stdout)


def shows(pane: Pane, *needles: str, timeout: float = 30) -> str:
    def found() -> str:
        text = screen(pane)
        return text if all(n in text for n in needles) else ""

    return wait_until(found, timeout, message=f"{needles} on screen:\n{screen(pane)}")


def test_interactive_lead_in_a_terminal(fake_api: FakeAnthropic, session: Session,
                                        tmp_path: Path, swarm_home: Path) -> None:
    chat = Chat()
    fake_api.fallback = chat
    exit_file = tmp_path / "exit-code"
    env = {"SWARM_HOME": str(swarm_home), "ANTHROPIC_API_KEY": "test-key",
           "ANTHROPIC_BASE_URL": fake_api.base_url, "NO_PROXY": "127.0.0.1", "HOME": str(tmp_path),
           "SWARM_SHUTDOWN_GRACE": "5", "PATH": os.environ["PATH"], "TERM": "xterm-256color"}
    lead = shlex.join([SWARM, "lead", "--model", "sonnet", "--teammate-model", "shell",
                       "--permission-mode", "bypassPermissions",  # it spawns one in bypass
                       "--backend", "hidden", "--team", "chat", "--cwd", str(tmp_path)])
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    command = f"env -i {exports} {lead}; echo $? > {shlex.quote(str(exit_file))}; sleep 60"
    window = session.new_window(window_name="lead", window_shell=command)
    pane = window.active_pane
    assert pane is not None
    shows(pane, "swarm lead: team chat", "\n>", timeout=90)  # the SDK import is slow under load

    pane.send_keys("please say hello", enter=True)
    shows(pane, "lead: Hello! Spawning alice and bob.", "alice: ran 1 command(s): ok")
    # bob asks before running `touch`: the question sits in the prompt line; `y` answers it.
    shows(pane, "bob wants to run: Bash: touch made-by-bob.txt [y/n/a] >")
    assert not (tmp_path / "made-by-bob.txt").exists()
    pane.send_keys("y", enter=True)
    wait_until((tmp_path / "made-by-bob.txt").exists, 15, message="bob's file after approval")
    shows(pane, "bob: ran 1 command(s): ok")

    pane.send_keys("/status", enter=True)
    status = shows(pane, "team chat", "  team-lead: ", "  alice: idle", "  bob: idle")
    assert "tokens" in status

    pane.send_keys("wait for me", enter=True)  # the lead's model call hangs...
    wait_until(chat.hanging.is_set, 15, message="the hanging model call")
    pane.send_keys("C-c", enter=False)  # ...and Ctrl-C abandons the turn, not the session
    shows(pane, "turn interrupted")
    chat.release.set()
    pane.send_keys("/tasks", enter=True)
    text = shows(pane, "(no tasks)")
    assert text.count("interrupted") == 1, text  # one line says it

    pane.send_keys("C-d", enter=False)  # the end: teammates shut down, the team is deleted
    # The shell creates the file, then writes the code into it: wait for the code.
    wait_until(lambda: exit_file.exists() and exit_file.read_text().strip(), 40,
               message=f"the lead to exit:\n{screen(pane)}")
    assert exit_file.read_text().strip() == "0", screen(pane)
    text = screen(pane)
    assert "ending the session" in text and "team chat deleted" in text
    assert not paths.team_dir("chat").exists()
    assert agent_processes(swarm_home) == []


def test_closing_the_terminal_ends_the_session(fake_api: FakeAnthropic, session: Session,
                                               tmp_path: Path, swarm_home: Path) -> None:
    fake_api.fallback = Chat()
    env = {"SWARM_HOME": str(swarm_home), "ANTHROPIC_API_KEY": "test-key",
           "ANTHROPIC_BASE_URL": fake_api.base_url, "NO_PROXY": "127.0.0.1", "HOME": str(tmp_path),
           "SWARM_SHUTDOWN_GRACE": "5", "PATH": os.environ["PATH"], "TERM": "xterm-256color"}
    lead = shlex.join([SWARM, "lead", "--model", "sonnet", "--teammate-model", "shell",
                       "--permission-mode", "bypassPermissions",  # it spawns one in bypass
                       "--backend", "hidden", "--team", "hup", "--cwd", str(tmp_path)])
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    window = session.new_window(window_name="lead", window_shell=f"env -i {exports} {lead}")
    pane = window.active_pane
    assert pane is not None
    shows(pane, "swarm lead: team hup", "\n>", timeout=90)
    pane.send_keys("please say hello", enter=True)
    shows(pane, "alice: ran 1 command(s): ok", "bob wants to run")  # bob waits for an answer
    assert len(agent_processes(swarm_home)) == 2
    pane.cmd("kill-pane")  # the terminal closes: SIGHUP
    wait_until(lambda: not paths.team_dir("hup").exists() and not agent_processes(swarm_home),
               40, message="the session's end after SIGHUP: teammates gone, team deleted")


def test_the_terminal_prompt_shows_the_real_input_and_a_prints_the_rule(
        fake_api: FakeAnthropic, session: Session, tmp_path: Path, swarm_home: Path) -> None:
    model = mallory_script(tmp_path / "mallory.json", "term")

    def chat(body: dict[str, Any]) -> Scripted:
        if last_user_text(body).endswith("spawn mallory"):
            return reply("Spawning.", [("SpawnTeammate", {"name": "mallory", "prompt": "go",
                                                          "model": model})])
        return reply("Noted.")

    fake_api.fallback = chat
    env = {"SWARM_HOME": str(swarm_home), "ANTHROPIC_API_KEY": "test-key",
           "ANTHROPIC_BASE_URL": fake_api.base_url, "NO_PROXY": "127.0.0.1", "HOME": str(tmp_path),
           "SWARM_SHUTDOWN_GRACE": "5", "PATH": os.environ["PATH"], "TERM": "xterm-256color"}
    command = shlex.join([SWARM, "lead", "--model", "sonnet", "--backend", "hidden", "--team",
                          "term", "--cwd", str(tmp_path)])
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    window = session.new_window(window_name="lead", window_shell=f"env -i {exports} {command}")
    pane = window.active_pane
    assert pane is not None
    try:
        shows(pane, "swarm lead: team term", "\n>", timeout=90)
        pane.send_keys("spawn mallory", enter=True)
        text = shows(pane, f"mallory wants to run: Bash: {REAL}", "[y/n/a] >")
        only_as_said(text)
        pane.send_keys("a", enter=True)
        # How the request ended is printed once, by the line every ending gets.
        done = f"mallory's request (Bash: {REAL}"
        text = shows(pane, f"adding team rule: Bash({REAL})", done)
        assert text.index("adding team rule") < text.index(done)
        assert Team.open("term").config().allowed_rules == [f"Bash({REAL})"]
        pane.send_keys("C-d", enter=False)
        wait_until(lambda: not agent_processes(swarm_home), 40,
                   message=f"the session's end:\n{screen(pane)}")
    finally:
        for stray in agent_processes(swarm_home):
            stop_tree(stray.pid)

